/** Invitations (issue #22): POST /invitations, GET /invitations/{invitationCode}, POST …/claim, POST …/cancel. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, ok, write } from '../../http/write.ts';
import {
  InvitationCodeParams,
  NoBody,
  UmaInvitationClaimSchema,
  UmaInvitationCreateSchema,
  UmaInvitationSchema,
} from './invitations.schemas.ts';
import { cancelInvitation, claimInvitation, createInvitation, getInvitation } from './invitations.service.ts';

const TAG = 'Invitations';

export function invitationRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/invitations',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createInvitation',
          tags: [TAG],
          summary: 'Create a UMA invitation from a customer',
          description:
            'A PENDING invitation from the customer whose UMA address is inviterUma, with the link to share. amountToSend ' +
            '(in the inviter’s currency) is shown to the invitee and moves nothing: after INVITATION.CLAIMED the platform pays ' +
            'it itself. A PRODUCTION platform needs a webhookEndpoint first (400 INVITATIONS_NOT_CONFIGURED).',
          body: UmaInvitationCreateSchema,
          response: { 201: UmaInvitationSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createInvitation(u, req.body))),
    );

    app.get(
      '/invitations/:invitationCode',
      {
        // The code makes the invitation's public link: the request log shows the route pattern instead.
        config: { auth: 'platform', permission: 'VIEW', secretInPath: true },
        schema: {
          operationId: 'getInvitation',
          tags: [TAG],
          summary: 'Get a UMA invitation by its code',
          description: 'A PENDING invitation whose expiresAt has passed (on the platform’s clock) reads as EXPIRED.',
          params: InvitationCodeParams,
          response: { 200: UmaInvitationSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) => getInvitation(ctx, platformOf(req).platform, req.params.invitationCode),
    );

    app.post(
      '/invitations/:invitationCode/claim',
      {
        config: { auth: 'platform', permission: 'MANAGE', secretInPath: true },
        schema: {
          operationId: 'claimInvitation',
          tags: [TAG],
          summary: 'Claim a UMA invitation for the invitee’s UMA address',
          description:
            'PENDING → CLAIMED, recording inviteeUma and claimedAt; the platform receives INVITATION.CLAIMED. A claimed, ' +
            'cancelled or expired invitation is a 400 naming its state (INVITATION_ALREADY_CLAIMED, INVITATION_CANCELLED, EXPIRED).',
          params: InvitationCodeParams,
          body: UmaInvitationClaimSchema,
          response: { 200: UmaInvitationSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await claimInvitation(u, req.params.invitationCode, req.body))),
    );

    app.post(
      '/invitations/:invitationCode/cancel',
      {
        config: { auth: 'platform', permission: 'MANAGE', secretInPath: true, optionalBody: true },
        schema: {
          operationId: 'cancelInvitation',
          tags: [TAG],
          summary: 'Cancel a pending UMA invitation',
          description:
            'PENDING → CANCELLED: the link can no longer be claimed. A claimed, cancelled or expired invitation is a 400 naming its state.',
          params: InvitationCodeParams,
          body: NoBody,
          response: { 200: UmaInvitationSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await cancelInvitation(u, req.params.invitationCode))),
    );
  };
}
