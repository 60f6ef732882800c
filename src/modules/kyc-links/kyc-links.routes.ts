/**
 * KYC links (issue #22): `POST /customers/{customerId}/kyc-link` (createCustomerKycLink) and the
 * hosted verification page Corridor serves itself (kyc-links.hosted.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { BASE_PATH } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, write } from '../../http/write.ts';
import { HOSTED_KYC_PATH, hostedKycRoutes } from './kyc-links.hosted.ts';
import { KycLinkCreateSchema, KycLinkHeaders, KycLinkParams, KycLinkResponseSchema } from './kyc-links.schemas.ts';
import { createKycLink } from './kyc-links.service.ts';

/** `protocol://host` when `host` is a plain host[:port] (no credentials, path, query or fragment), else undefined. */
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

/**
 * The URL the hosted page's tokens are appended to: this server as the API call reached it (its
 * Host header), since that is where the platform can reach it. Without a usable Host, the address
 * the connection came in on.
 */
function pageBaseOf(req: FastifyRequest): string {
  const path = `${BASE_PATH}${HOSTED_KYC_PATH}`;
  const origin = originOf(req.protocol, req.headers.host);
  if (origin) return `${origin}${path}`;
  const { localAddress = '127.0.0.1', localPort } = req.socket;
  const host = localAddress.includes(':') ? `[${localAddress}]` : localAddress;
  return `${req.protocol}://${host}:${localPort}${path}`;
}

export function kycLinkRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/customers/:customerId/kyc-link',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'createCustomerKycLink',
          tags: ['KYC/KYB Verifications'],
          summary: 'Make a single-use link to the hosted KYC (individual) or KYB (business) page for a customer',
          description:
            "The link opens a page Corridor serves, showing the customer and a form; submitting it verifies the customer as POST /verifications does, with the same CUSTOMER.KYC_* / CUSTOMER.KYB_* and VERIFICATION.* webhooks (in the sandbox the tester picks the outcome, unless a business's registrationNumber decides it). Making a link changes nothing on the customer. Each call makes a new link; earlier ones stay valid until used or expired (24 hours).",
          params: KycLinkParams,
          headers: KycLinkHeaders,
          body: KycLinkCreateSchema,
          response: { 201: KycLinkResponseSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => {
        const pageBase = pageBaseOf(req);
        return write(ctx, req, reply, async (u) => created(await createKycLink(u, req.params.customerId, req.body, pageBase)));
      },
    );

    await app.register(hostedKycRoutes(ctx));
  };
}
