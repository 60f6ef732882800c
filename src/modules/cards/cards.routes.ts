/**
 * Cards (issue #24): GET/POST /cards, GET/PATCH /cards/{id}, POST /cards/{id}/reveal, the hosted
 * reveal page, and the ten sandbox simulations under /sandbox/cards/{id}/simulate/
 * (card-simulations.routes.ts). Cards work on SANDBOX platforms; on a PRODUCTION platform every card
 * operation is 501 NOT_IMPLEMENTED (a self-hosted Corridor has no card issuer) and the simulations
 * are 403, as every sandbox operation is. Rules and decisions: docs/cards.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { BASE_PATH } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { pageRequest, toWirePage } from '../../http/pagination.ts';
import { errorResponses, Obj } from '../../http/schemas.ts';
import { created, ok, write } from '../../http/write.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { HOSTED_REVEAL_PATH, hostedRevealRoutes } from './card-reveal.hosted.ts';
import { revealCard } from './card-reveal.service.ts';
import { cardSimulationRoutes } from './card-simulations.routes.ts';
import { cardErrors } from './cards.errors.ts';
import {
  CardCreateSchema,
  CardIdParams,
  CardListQuery,
  CardListSchema,
  CardRevealSchema,
  CardSchema,
  CardUpdateSchema,
} from './cards.schemas.ts';
import { createCard, getCard, listCards, updateCardById } from './cards.service.ts';

const TAG = 'Cards';
const SANDBOX_PATH = `${BASE_PATH}/sandbox/`;

/** `protocol://host` when `host` is a plain host[:port], else undefined (as the hosted KYC page's links are made). */
function originOf(protocol: string, host: string | undefined): string | undefined {
  if (!host) return undefined;
  try {
    const url = new URL(`${protocol}://${host}`);
    const plain = url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
    return plain ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The URL a reveal token is appended to: this server as the API call reached it, else the address the connection came in on. */
function revealPageBase(req: FastifyRequest): string {
  const path = `${BASE_PATH}${HOSTED_REVEAL_PATH}`;
  const origin = originOf(req.protocol, req.headers.host);
  if (origin) return `${origin}${path}`;
  const { localAddress = '127.0.0.1', localPort } = req.socket;
  const host = localAddress.includes(':') ? `[${localAddress}]` : localAddress;
  return `${req.protocol}://${host}:${localPort}${path}`;
}

export function cardRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    // Before the input is looked at: a PRODUCTION platform has no cards (501) and no sandbox (403).
    app.addHook('preValidation', async (req) => {
      const auth = req.platformAuth;
      if (!auth || isSandbox(auth.platform)) return;
      throw (req.routeOptions.url ?? '').startsWith(SANDBOX_PATH) ? errors.sandboxOnly() : cardErrors.notImplemented();
    });

    app.get(
      '/cards',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listCards',
          tags: [TAG],
          summary: 'List cards',
          description:
            'Filter by cardholder, by an internal account among the funding sources, by platformCardId or state; newest first by default.',
          querystring: CardListQuery,
          response: { 200: CardListSchema, ...errorResponses(400, 401, 403, 501) },
        },
      },
      async (req) => toWirePage(await listCards(ctx, platformOf(req).platform, req.query, pageRequest(req.query))),
    );

    app.post(
      '/cards',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createCard',
          tags: [TAG],
          summary: 'Issue a card',
          description:
            'A PROCESSING card for a KYC-approved cardholder, funded by its own internal accounts in one card-eligible currency ' +
            '(USD or USDB). The sandbox provisions it on its clock: ACTIVE at once (CARD.STATE_CHANGE), unless the last three ' +
            'characters of platformCardId (of cardholderId when none is given) are 001 (stays PROCESSING), 002 (CLOSED, ' +
            'ISSUER_REJECTED) or 005 (ACTIVE 30 s later).',
          body: CardCreateSchema,
          response: { 201: CardSchema, ...errorResponses(400, 401, 403, 404, 409, 410, 501) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createCard(u, req.body))),
    );

    app.get(
      '/cards/:id',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getCardById',
          tags: [TAG],
          summary: 'Get a card',
          params: CardIdParams,
          response: { 200: CardSchema, ...errorResponses(400, 401, 403, 404, 501) },
        },
      },
      async (req) => getCard(ctx, platformOf(req).platform, req.params.id),
    );

    app.patch(
      '/cards/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updateCardById',
          tags: [TAG],
          summary: 'Freeze, unfreeze or close a card; replace its funding sources; set or clear its limit',
          description:
            'state: ACTIVE ⇄ FROZEN and ACTIVE | FROZEN → CLOSED (terminal); any other transition is 409 INVALID_STATE_TRANSITION, ' +
            'closing a CLOSED card 409 CARD_ALREADY_CLOSED, any other change of a CLOSED card 409 CARD_NOT_MUTABLE. fundingSources ' +
            'replaces the list (CARD.FUNDING_SOURCE_CHANGE); maxSpendPerTransaction null clears the limit. Answers 200 directly.',
          params: CardIdParams,
          body: CardUpdateSchema,
          response: { 200: CardSchema, ...errorResponses(400, 401, 403, 404, 409, 501) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await updateCardById(u, req.params.id, req.body))),
    );

    app.post(
      '/cards/:id/reveal',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'revealCard',
          tags: [TAG],
          summary: "Mint a single-use, 5-minute link to a page showing the card's number, CVV and expiry",
          description:
            'The page is served by Corridor (no external resources, not cached) and shows the details once; the reveal is recorded ' +
            'against the calling API token. Only ACTIVE and FROZEN cards have details to reveal (409 otherwise).',
          params: CardIdParams,
          body: Obj({}),
          response: { 200: CardRevealSchema, ...errorResponses(400, 401, 403, 404, 409, 501) },
        },
      },
      async (req, reply) => {
        const pageBase = revealPageBase(req);
        const actor = platformOf(req).token.id;
        return write(ctx, req, reply, async (u) => ok(await revealCard(u, req.params.id, actor, pageBase)));
      },
    );

    await app.register(cardSimulationRoutes(ctx));
    await app.register(hostedRevealRoutes(ctx));
  };
}
