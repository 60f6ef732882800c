/**
 * Contact verification (issue #22): POST /customers/{customerId}/verify-email[/confirm] and
 * verify-phone[/confirm]. A send answers 204; a confirm answers the customer with the channel
 * VERIFIED. Rules and limits: contact-verification.service.ts; docs/contact-verification.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { Obj, errorResponses } from '../../http/schemas.ts';
import { noContent, ok, write, writeThen } from '../../http/write.ts';
import { CustomerIdParams, CustomerSchema } from '../customers/customers.schemas.ts';
import { ContactVerificationConfirmSchema } from './contact-verification.schemas.ts';
import { confirmCode, sendCode } from './contact-verification.service.ts';
import type { ContactChannel } from './contact-verification.tables.ts';

const TAG = 'Contact Verification';
const SENT = { type: 'null', description: 'Verification code sent' } as const;

/** The two operations of one channel, named as the live API names them. */
const CHANNELS: { channel: ContactChannel; path: string; send: string; confirm: string; what: string }[] = [
  {
    channel: 'EMAIL',
    path: 'verify-email',
    send: 'sendCustomerEmailVerification',
    confirm: 'confirmCustomerEmailVerification',
    what: 'email',
  },
  {
    channel: 'PHONE',
    path: 'verify-phone',
    send: 'sendCustomerPhoneVerification',
    confirm: 'confirmCustomerPhoneVerification',
    what: 'phone',
  },
];

export function contactVerificationRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const { channel, path, send, confirm, what } of CHANNELS) {
      app.post(
        `/customers/:customerId/${path}`,
        {
          // The live operation takes no body; an empty JSON object is accepted, anything in it is not.
          config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
          schema: {
            operationId: send,
            tags: [TAG],
            summary: `Send (or send again) a one-time code to the customer's ${what}`,
            description:
              `Replaces any outstanding ${what} code; a code lives 10 minutes, and at most 5 are sent per hour. ` +
              `409 when the customer need not verify its ${what} or it is already verified. The sandbox sends nothing: its code is 123456.`,
            params: CustomerIdParams,
            body: Obj({}),
            response: { 204: SENT, ...errorResponses(400, 401, 403, 404, 409, 410, 429) },
          },
        },
        async (req, reply) =>
          write(ctx, req, reply, async (u) => {
            await sendCode(u, req.params.customerId, channel);
            return noContent;
          }),
      );

      app.post(
        `/customers/:customerId/${path}/confirm`,
        {
          config: { auth: 'platform', permission: 'MANAGE' },
          schema: {
            operationId: confirm,
            tags: [TAG],
            summary: `Confirm the customer's ${what} with the code it received`,
            description:
              `200 with the customer, its contactVerification.${what} VERIFIED. A wrong code is 400 and counts: the 5th wrong code voids it. ` +
              'A code sent to a previous contact, an expired one or none is 400. 409 when already verified or not required.',
            params: CustomerIdParams,
            body: ContactVerificationConfirmSchema,
            response: { 200: CustomerSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
          },
        },
        // A wrong code is counted in the unit, which commits; the refusal is answered after it.
        async (req, reply) =>
          writeThen(
            ctx,
            req,
            reply,
            (u) => confirmCode(u, req.params.customerId, channel, req.body.code),
            async (outcome) => {
              if (outcome.kind === 'rejected') throw outcome.error;
              return ok(outcome.customer);
            },
          ),
      );
    }
  };
}
