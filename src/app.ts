/**
 * buildApp(config, deps): the whole server as a Fastify instance, assembled and not yet listening —
 * no migration run, no background loop started (see `startBackground`). Tests build it in-process
 * and talk to it over real HTTP; `corridor start` migrates the store, builds it and listens.
 */
import swagger from '@fastify/swagger';
import { docsOpenApi, prebuiltOpenApi } from './http/openapi-document.ts';
import { enrichOpenApi } from './http/openapi-enrich.ts';
import { docsPages, docsUiOptions } from './http/openapi-ui.ts';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { API_VERSION, BASE_PATH, type Config } from './config.ts';
import type { AppContext } from './context.ts';
import type { Deps } from './deps.ts';
import { installAuth } from './http/auth.ts';
import { AuthCache } from './http/auth-cache.ts';
import { errors } from './http/errors.ts';
import { clientErrorHandler, installErrorHandling, sendError } from './http/error-handler.ts';
import { installSerializers } from './http/serialization.ts';
import { installValidators } from './http/validation.ts';
import { authRoutes } from './modules/auth/auth.routes.ts';
import { adminRoutes } from './modules/admin/admin.routes.ts';
import { agentRoutes } from './modules/agents/agents.routes.ts';
import { findAgentByTokenHash } from './modules/agents/agents.repo.ts';
import { configRoutes } from './modules/config/config.routes.ts';
import { customerRoutes } from './modules/customers/customers.routes.ts';
import { discoveryRoutes } from './modules/discoveries/discoveries.routes.ts';
import { exchangeRateRoutes } from './modules/exchange-rates/exchange-rates.routes.ts';
import { externalAccountRoutes } from './modules/external-accounts/external-accounts.routes.ts';
import { internalAccountRoutes } from './modules/internal-accounts/internal-accounts.routes.ts';
import { beneficialOwnerRoutes } from './modules/kyc/beneficial-owners.routes.ts';
import { documentRoutes } from './modules/kyc/documents.routes.ts';
import { verificationRoutes } from './modules/kyc/verifications.routes.ts';
import { sandboxRoutes } from './modules/sandbox/sandbox.routes.ts';
import { faultRoutes } from './modules/sandbox/faults.routes.ts';
import { deliveryFaults, installFaultInjection } from './modules/sandbox/faults.inject.ts';
import { triggerRoutes } from './modules/devtools/trigger.routes.ts';
import { fixtureRoutes } from './modules/devtools/fixtures.routes.ts';
import { paymentRoutes } from './modules/payments/payments.routes.ts';
import { healthRoutes } from './modules/system/system.routes.ts';
import { findTokenWithPlatform } from './modules/tokens/tokens.repo.ts';
import { tokenRoutes } from './modules/tokens/tokens.routes.ts';
import { openStore, type Store } from './store/db.ts';
import { secretBox } from './store/secret-box.ts';
import { concurrentJobKinds, installReplyHooks, jobHandlers } from './background.ts';
import { JobRunner, type JobHandler } from './jobs/jobs.ts';
import { openUnit } from './unit.ts';
import { webhookRoutes } from './modules/webhooks/webhooks.routes.ts';
import { bulkImportRoutes } from './modules/bulk-import/bulk-import.routes.ts';
import { invitationRoutes } from './modules/invitations/invitations.routes.ts';
import { delegatedKeyRoutes } from './modules/delegated-keys/delegated-keys.routes.ts';
import { lookupRoutes } from './modules/lookups/lookups.routes.ts';
import { ownershipRoutes } from './modules/ownership/ownership.routes.ts';
import { kycLinkRoutes } from './modules/kyc-links/kyc-links.routes.ts';
import { contactVerificationRoutes } from './modules/contact-verification/contact-verification.routes.ts';
import { scaRoutes } from './modules/sca/sca.routes.ts';
import { cardRoutes } from './modules/cards/cards.routes.ts';
import { stablecoinRoutes } from './modules/stablecoins/stablecoins.routes.ts';
import { WebhookDeliverer } from './webhook-delivery/deliverer.ts';
import { dashboardRoutes } from './dashboard/dashboard.routes.ts';
import { dashboardApiRoutes, operatorRoutes } from './dashboard/dashboard-api.routes.ts';
import { getPlatform } from './modules/platforms/platforms.repo.ts';
import { openApiWebhooks, WEBHOOK_SIGNATURE_SCHEME } from './webhook-delivery/catalogue.ts';
import { toLiveNames } from './lib/wire-names.ts';

export interface BuildOptions {
  /** An already-open store (tests share one); otherwise one is opened from config. */
  store?: Store;
  /** Close the store with the app (default: only when buildApp opened it). */
  closeStore?: boolean;
  /** Job kinds beyond the app's own list (src/background.ts): tests' probes. */
  extraJobHandlers?: ReadonlyMap<string, JobHandler>;
}

export type App = FastifyInstance & { ctx: AppContext };

export async function buildApp(config: Config, deps: Deps, opts: BuildOptions = {}): Promise<App> {
  const store = opts.store ?? openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, pgGroups: config.pgGroupCommit });
  const ctx: AppContext = {
    config,
    deps,
    store,
    db: store.db,
    secrets: secretBox(config),
    jobs: undefined as unknown as JobRunner,
    webhooks: undefined as unknown as WebhookDeliverer,
  };
  ctx.jobs = new JobRunner({
    db: store.db,
    kind: store.kind,
    clock: deps.clock,
    handlers: new Map([...jobHandlers(), ...(opts.extraJobHandlers ?? [])]),
    concurrentKinds: concurrentJobKinds(),
    openUnit: (trx, platform) => openUnit(trx, ctx, platform),
    onError: (err, job) => app.log.error({ err, jobId: job.id, kind: job.kind }, 'job failed'),
    onPollError: (err) => app.log.error({ err }, 'job runner pass failed'),
  });
  ctx.webhooks = new WebhookDeliverer({
    db: store.db,
    kind: store.kind,
    clock: deps.clock,
    ids: deps.ids,
    secrets: ctx.secrets,
    allowPrivate: config.webhookAllowPrivate,
    liveNames: config.wireNames === 'live',
    onError: (err) => app.log.error({ err }, 'webhook delivery loop failed'),
    // Sandbox fault injection: dropped deliveries (modules/sandbox/faults.inject.ts).
    dropDelivery: deliveryFaults(store.db, deps),
  });
  installReplyHooks(ctx);

  /** The served OpenAPI document, serialised once (see below). */
  let openApiJson: string | undefined;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Defence in depth: nothing logs these, and if something ever did they would be masked.
      redact: {
        paths: ['req.headers.authorization', '*.clientSecret', '*.secret', '*.otp', '*.accessToken', '*.apiClientSecret'],
        censor: '[redacted]',
      },
    },
    // Fastify's own per-request lines are off; installRequestLog writes one line per request.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    // A slow client is cut off: its headers must arrive within headersTimeoutMs and the whole
    // request within requestTimeoutMs (Node answers 408 and closes), and an idle keep-alive
    // connection closes after idleTimeoutMs. Node checks the first two every second.
    requestTimeout: config.http.requestTimeoutMs,
    keepAliveTimeout: config.http.idleTimeoutMs,
    http: { headersTimeout: config.http.headersTimeoutMs, connectionsCheckingInterval: 1_000 },
    routerOptions: { maxParamLength: 256 },
    genReqId: () => deps.ids.next('Request'),
    requestIdHeader: false,
    ajv: { customOptions: { removeAdditional: false } },
    clientErrorHandler,
    frameworkErrors: (_err, _req, reply) => {
      void sendError(reply, errors.invalidInput('Malformed request URL'));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setChildLoggerFactory(lazyChildLogger);
  installValidators(app);
  installSerializers(app);
  installErrorHandling(app, config.bodyLimitBytes);
  installJsonParser(app);
  installRequestLog(app);
  // CORRIDOR_WIRE_NAMES=live: responses name account types as the live API does (lib/wire-names.ts).
  if (config.wireNames === 'live') app.addHook('preSerialization', async (_req, _reply, payload) => toLiveNames(payload));
  app.addHook('preValidation', (req, _reply, done) => {
    if (req.routeOptions.config?.optionalBody && req.body === undefined) req.body = {};
    done();
  });
  // SQLite is single-process, so verified credentials can be cached (see auth-cache.ts).
  const authCache = store.kind === 'sqlite' ? new AuthCache() : undefined;
  installAuth(
    app,
    { findByClientId: (id) => findTokenWithPlatform(store.db, id) },
    config.adminToken,
    authCache,
    {
      findByTokenHash: (h) => findAgentByTokenHash(store.db, h),
    },
    { findPlatform: (id) => getPlatform(store.db, id) },
  );

  // Sandbox fault injection (POST /sandbox/faults): after auth's hook (it reads the caller's platform),
  // before the routes (it collects the ones a rule may name).
  const faults = installFaultInjection(app, store.db, deps, BASE_PATH);

  // Routes whose body may be left out (config.optionalBody): the document says so, as the live API
  // does; one whose body has no fields declares none (the live API has none there).
  const optionalBodies = new Set<string>();
  await app.register(swagger, {
    transform: ({ schema, url, route }) => {
      if (!route.config?.optionalBody || !schema?.body) return { schema, url };
      const body = schema.body as { properties?: Record<string, unknown> };
      if (Object.keys(body.properties ?? {}).length === 0) {
        const { body: _none, ...rest } = schema;
        return { schema: rest, url };
      }
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const m of methods) optionalBodies.add(`${m.toLowerCase()} ${url.replace(/:(\w+)/g, '{$1}')}`);
      return { schema, url };
    },
    transformObject: (doc) => {
      if (!('openapiObject' in doc)) return doc.swaggerObject;
      const { openapiObject } = doc;
      for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
        for (const [method, op] of Object.entries(item as Record<string, { requestBody?: { required?: boolean } }>)) {
          if (op.requestBody && optionalBodies.has(`${method} ${path}`)) op.requestBody.required = false;
        }
      }
      // Enums, response descriptions, examples, the magic values' link (http/openapi-enrich.ts).
      return enrichOpenApi(openapiObject);
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Corridor',
        version: API_VERSION,
        description:
          'Open-source implementation of the money-movement API: accounts, quotes and transfers on a double-entry ledger, ' +
          'embedded-wallet auth, agents, signed webhooks and a sandbox steered by magic values. Paths include the version segment.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/' }],
      // What Corridor POSTs to the platform's webhookEndpoint: generated from the event catalogue.
      webhooks: openApiWebhooks(),
      components: {
        securitySchemes: {
          BasicAuth: { type: 'http', scheme: 'basic', description: '<api token clientId>:<client secret>' },
          AgentAuth: { type: 'http', scheme: 'bearer', description: 'accessToken from redeeming an agent device code' },
          AdminAuth: { type: 'http', scheme: 'bearer', description: 'CORRIDOR_ADMIN_TOKEN (operator routes)' },
          WebhookSignature: WEBHOOK_SIGNATURE_SCHEME,
        },
      },
    },
  });
  // /docs shows the served document in its compact form (http/openapi-compact.ts), dressed for Corridor (http/openapi-ui.ts).
  await app.register(swaggerUi, docsUiOptions(docsOpenApi(() => (openApiJson ??= openApiDocument()))));
  await app.register(docsPages);

  await app.register(healthRoutes(ctx));
  await app.register(adminRoutes(ctx));
  // The local dashboard (issue #25): static files on /dashboard* only, its operator list under /_admin.
  await app.register(dashboardRoutes());
  await app.register(operatorRoutes(ctx));
  await app.register(
    async (api) => {
      api.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) => {
        openApiJson ??= openApiDocument();
        return reply.type('application/json; charset=utf-8').send(openApiJson);
      });
      await api.register(tokenRoutes(ctx));
      await api.register(configRoutes(ctx));
      await api.register(customerRoutes(ctx));
      await api.register(exchangeRateRoutes(ctx));
      await api.register(discoveryRoutes());
      await api.register(internalAccountRoutes(ctx));
      await api.register(externalAccountRoutes(ctx));
      await api.register(beneficialOwnerRoutes(ctx));
      await api.register(documentRoutes(ctx));
      await api.register(verificationRoutes(ctx));
      await api.register(sandboxRoutes(ctx));
      await api.register(faultRoutes(ctx, faults));
      await api.register(triggerRoutes(ctx));
      await api.register(fixtureRoutes(ctx));
      await api.register(paymentRoutes(ctx));
      await api.register(webhookRoutes(ctx));
      await api.register(authRoutes(ctx));
      await api.register(agentRoutes(ctx));
      // Issue #22's areas.
      await api.register(bulkImportRoutes(ctx));
      await api.register(invitationRoutes(ctx));
      await api.register(delegatedKeyRoutes(ctx));
      await api.register(lookupRoutes(ctx));
      await api.register(ownershipRoutes(ctx));
      await api.register(kycLinkRoutes(ctx));
      await api.register(contactVerificationRoutes(ctx));
      // Issues #23 and #24.
      await api.register(scaRoutes(ctx));
      await api.register(cardRoutes(ctx));
      await api.register(stablecoinRoutes(ctx));
      await api.register(dashboardApiRoutes(ctx));
    },
    { prefix: BASE_PATH },
  );

  app.addHook('onClose', async () => {
    await ctx.jobs.stop();
    await ctx.webhooks.stop();
    if (opts.closeStore ?? !opts.store) await store.close();
  });
  // The document: the build's copy when there is one (read on the first request for it); otherwise
  // built once here, before the server listens: ~100–150 ms of one event-loop turn that, built on a
  // request or after listen, would hold every tenant's requests (see http/openapi-document.ts).
  const prebuilt = prebuiltOpenApi();
  const openApiDocument = () => (prebuilt ? prebuilt() : JSON.stringify(app.swagger()));
  if (!prebuilt)
    app.addHook('onReady', async () => {
      openApiJson ??= openApiDocument();
    });
  await app.ready();
  return Object.assign(app, { ctx }) as unknown as App;
}

/**
 * Starts a built app's background loops: the job runner (delayed outcomes, expiries) and the
 * webhook deliverer. `corridor start` does, after migrating the store; tests do when they need them.
 */
export function startBackground(app: App): void {
  app.ctx.jobs.start();
  app.ctx.webhooks.start();
}

/** JSON bodies via Fastify's prototype-poisoning-safe parser; an empty body counts as no body. */
function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Fastify also accepts text/plain by default; the API is JSON only, so that is a Content-Type 400.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (typeof body !== 'string' || body.trim() === '') {
      done(null, undefined);
      return;
    }
    parse(req, body, done);
  });
}

/** One log line per request, carrying its request id; the id is also a response header. */
function installRequestLog(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    req.log.info(
      { method: req.method, url: loggedUrl(req), statusCode: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
    done();
  });
}

/**
 * Secrets that can arrive in a URL: an agent device code (the path segment after `device-codes/`,
 * or anything shaped like one), an agent access token, a client secret. Matched routes that carry
 * one log their pattern instead; unmatched URLs (a typo, a wrong method) are scrubbed with these.
 */
const URL_SECRETS: readonly [RegExp, string][] = [
  [/(\/device-codes\/)[^/?#]+/gi, '$1[redacted]'],
  [/(\/invitations\/)[^/?#]+/gi, '$1[redacted]'],
  [/AGENT-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}/gi, '[redacted]'],
  [/\b(gat|sk)_[A-Za-z0-9_-]+/g, '[redacted]'],
];

/** One cheap test first: almost no URL holds anything URL_SECRETS would replace. */
const MAY_HOLD_SECRET = /device-codes|invitations\/|AGENT-|gat_|sk_/i;

/** The URL as the request log shows it: without secrets. */
function loggedUrl(req: FastifyRequest): string {
  if (req.routeOptions.config?.secretInPath) return req.routeOptions.url ?? '[redacted]';
  let url = req.url;
  if (!MAY_HOLD_SECRET.test(url)) return url;
  for (const [pattern, replacement] of URL_SECRETS) url = url.replace(pattern, replacement);
  return url;
}

/**
 * Per-request loggers carry the request id, but building a pino child (serialising its bindings)
 * costs more than many requests' own work; this one builds it on the first line actually written
 * at an enabled level, so requests that log nothing pay nothing. Methods live on the prototype, so
 * a request allocates one small object.
 */
class LazyChildLogger {
  private real: FastifyBaseLogger | undefined;
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}
  private get logger(): FastifyBaseLogger {
    this.real ??= this.parent.child(this.bindings, this.opts);
    return this.real;
  }
  private write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    if ((this.parent as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled(level)) {
      (this.logger[level] as (...a: unknown[]) => void)(...args);
    }
  }
  get level(): string {
    return this.parent.level;
  }
  set level(v: string) {
    this.logger.level = v;
  }
  child(b: Bindings, o?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(b, o);
  }
  silent(): void {}
  fatal(...a: unknown[]): void {
    this.write('fatal', a);
  }
  error(...a: unknown[]): void {
    this.write('error', a);
  }
  warn(...a: unknown[]): void {
    this.write('warn', a);
  }
  info(...a: unknown[]): void {
    this.write('info', a);
  }
  debug(...a: unknown[]): void {
    this.write('debug', a);
  }
  trace(...a: unknown[]): void {
    this.write('trace', a);
  }
}

function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  // The class implements every method Fastify calls; its typing differs only in pino's overloads.
  return new LazyChildLogger(logger, bindings, opts) as unknown as FastifyBaseLogger;
}
