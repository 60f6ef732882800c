/**
 * Agent management (BasicAuth): agents, their policy and device codes, the approval queue and
 * decisions; plus the unauthenticated device-code redemption. The agent's own routes
 * (/agents/me…, AgentAuth) are registered from agent-me.routes.ts.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { pageRequest, toWirePage } from '../../http/pagination.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses, Obj } from '../../http/schemas.ts';
import { created, noContent, ok, write, writeFor } from '../../http/write.ts';
import { platformNowMs } from '../../lib/time.ts';
import { approveAction, listApprovals, rejectAction } from './actions.service.ts';
import { agentMeRoutes } from './agent-me.routes.ts';
import {
  ActionParams,
  AgentActionListSchema,
  AgentActionSchema,
  AgentCreateResponseSchema,
  AgentCreateSchema,
  AgentIdParams,
  AgentListQuery,
  AgentListSchema,
  AgentSchema,
  AgentUpdateSchema,
  ApprovalListQuery,
  CodeParams,
  DeviceCodeSchema,
  DeviceCodeStatusSchema,
  PolicyUpdateSchema,
  RedeemResponseSchema,
  RejectSchema,
} from './agents.schemas.ts';
import {
  agentToWire,
  createAgent,
  type Grantor,
  deleteAgent,
  deviceCodePlatform,
  deviceCodeStatus,
  getAgent,
  listAgentPage,
  redeem,
  regenerateDeviceCode,
  updateAgentFields,
  updateAgentPolicy,
} from './agents.service.ts';

const TAG = 'Agent Management';
const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Replays return the first response' })),
});
const NoBody = Obj({}, { title: 'EmptyRequest' });
const deleted = { 204: { type: 'null', description: 'Deleted' } } as const;

/** Whether the caller's token may hand an agent money movement (see agents.service `Grantor`). */
const grantorOf = (req: FastifyRequest): Grantor => ({ canTransact: platformOf(req).permissions.includes('TRANSACT') });

export function agentRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(agentMeRoutes(ctx));

    app.post(
      '/agents',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createAgent',
          tags: [TAG],
          summary: 'Create an agent for a customer; returns it with its first device code',
          headers: IdempotencyHeaders,
          body: AgentCreateSchema,
          response: { 201: AgentCreateResponseSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createAgent(u, req.body, grantorOf(req)))),
    );

    app.get(
      '/agents',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listAgents',
          tags: [TAG],
          summary: 'List agents',
          querystring: AgentListQuery,
          response: { 200: AgentListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listAgentPage(ctx, platformOf(req).platform, req.query, pageRequest(req.query))),
    );

    app.get(
      '/agents/approvals',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listAgentApprovals',
          tags: [TAG],
          summary: 'List agent actions waiting for approval (PENDING_APPROVAL)',
          querystring: ApprovalListQuery,
          response: { 200: AgentActionListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listApprovals(ctx, platformOf(req).platform, req.query, pageRequest(req.query))),
    );

    app.get(
      '/agents/:agentId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getAgentById',
          tags: [TAG],
          summary: 'Get an agent',
          params: AgentIdParams,
          response: { 200: AgentSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return agentToWire(await getAgent(ctx.db, platform.id, req.params.agentId), platformNowMs(ctx.deps.clock, platform));
      },
    );

    app.patch(
      '/agents/:agentId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updateAgent',
          tags: [TAG],
          summary: 'Rename, pause or resume an agent',
          params: AgentIdParams,
          body: AgentUpdateSchema,
          response: { 200: AgentSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => ok(await updateAgentFields(u, req.params.agentId, req.body, grantorOf(req)))),
    );

    app.delete(
      '/agents/:agentId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deleteAgent',
          tags: [TAG],
          summary: 'Delete an agent; its access token stops working at once',
          params: AgentIdParams,
          response: { ...deleted, ...errorResponses(401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await deleteAgent(u, req.params.agentId);
          return noContent;
        }),
    );

    app.patch(
      '/agents/:agentId/policy',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updateAgentPolicy',
          tags: [TAG],
          summary: "Partially update an agent's policy (effective at once)",
          params: AgentIdParams,
          body: PolicyUpdateSchema,
          response: { 200: AgentSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => ok(await updateAgentPolicy(u, req.params.agentId, req.body, grantorOf(req)))),
    );

    app.post(
      '/agents/:agentId/device-codes',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'regenerateAgentDeviceCode',
          tags: [TAG],
          summary: 'Issue a new device code; earlier unredeemed codes stop working',
          params: AgentIdParams,
          headers: IdempotencyHeaders,
          body: NoBody,
          response: { 201: DeviceCodeSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await regenerateDeviceCode(u, req.params.agentId, grantorOf(req)))),
    );

    app.post(
      '/agents/:agentId/actions/:actionId/approve',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'approveAgentAction',
          tags: [TAG],
          summary: 'Approve a pending agent action and execute it under the current policy',
          params: ActionParams,
          body: NoBody,
          response: { 200: AgentActionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await approveAction(u, req.params.agentId, req.params.actionId))),
    );

    app.post(
      '/agents/:agentId/actions/:actionId/reject',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'rejectAgentAction',
          tags: [TAG],
          summary: 'Reject a pending agent action',
          params: ActionParams,
          body: RejectSchema,
          response: { 200: AgentActionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => ok(await rejectAction(u, req.params.agentId, req.params.actionId, req.body?.reason))),
    );

    app.get(
      '/agents/device-codes/:code/status',
      {
        config: { auth: 'platform', permission: 'VIEW', secretInPath: true },
        schema: {
          operationId: 'getAgentDeviceCodeStatus',
          tags: [TAG],
          summary: 'Whether a device code was redeemed (poll during installation)',
          params: CodeParams,
          response: { 200: DeviceCodeStatusSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => deviceCodeStatus(ctx, platformOf(req).platform, req.params.code),
    );

    app.post(
      '/agents/device-codes/:code/redeem',
      {
        config: { auth: 'none', optionalBody: true, secretInPath: true },
        schema: {
          operationId: 'redeemAgentDeviceCode',
          tags: [TAG],
          summary: 'Redeem a device code for the agent access token (the code is the credential)',
          params: CodeParams,
          body: NoBody,
          response: { 200: RedeemResponseSchema, ...errorResponses(400, 404) },
        },
      },
      async (req, reply) => {
        // The code names its platform: the redemption is a write of that platform, not of a caller's.
        const platformId = await deviceCodePlatform(ctx.db, req.params.code);
        return writeFor(ctx, platformId, req, reply, undefined, async (u) => ok(await redeem(u, req.params.code)));
      },
    );
  };
}
