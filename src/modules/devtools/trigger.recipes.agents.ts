/**
 * Trigger recipe for agents: an agent whose policy sends every movement for approval, installed
 * (its device code redeemed, as the agent would), submits a transfer-out through the same action
 * service as POST /agents/me/transfer-out, which waits as PENDING_APPROVAL.
 */
import type { WebhookType } from '../../webhook-delivery/catalogue.ts';
import { ownTransferOut } from '../agents/agent-ops.service.ts';
import type { Policy } from '../agents/agents.schemas.ts';
import { createAgent, getAgent, redeem } from '../agents/agents.service.ts';
import { fundInternalAccount } from '../sandbox/sandbox.service.ts';
import { AMOUNT, CURRENCY, customer, ids, oneUnit, type Recipe, usAccount } from './trigger.recipes.common.ts';

export const AGENT_RECIPES: Partial<Record<WebhookType, Recipe>> = {
  'AGENT_ACTION.PENDING_APPROVAL': oneUnit(
    'an agent (policy APPROVAL_REQUIRED) of a funded customer submits a transfer-out to its bank account; approve or reject ' +
      'it with POST /agents/{agentId}/actions/{actionId}/approve or /reject',
    async (u) => {
      const c = await customer(u);
      await fundInternalAccount(u, c.internalAccountId, AMOUNT * 10);
      const externalAccountId = await usAccount(u, c.customerId, '001');
      const policy: Policy = {
        permissions: ['CREATE_TRANSFERS'],
        defaultExecutionMode: 'APPROVAL_REQUIRED',
        spendingLimits: { currency: CURRENCY, perTransactionLimit: AMOUNT * 10 },
      };
      // The trigger route needs TRANSACT, so its caller may hand an agent money movement.
      const { agent, deviceCode } = await createAgent(
        u,
        { name: 'Trigger agent', customerId: c.customerId, policy },
        { canTransact: true },
      );
      // Installed as an agent installs itself; the access token is not kept (nobody holds it: the platform
      // can issue a new device code for a real agent).
      await redeem(u, deviceCode.code);
      const row = await getAgent(u.trx, u.platform.id, agent.id);
      const action = await ownTransferOut(u, row, {
        source: { accountId: c.internalAccountId },
        destination: { accountId: externalAccountId },
        amount: AMOUNT,
      });
      return { created: { ...ids(c), externalAccountId, agentId: agent.id, agentActionId: action.id }, resourceId: action.id };
    },
  ),
};
