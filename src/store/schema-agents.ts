/** Table types of agents (migration 0009): agents, their device codes, access tokens, actions and quotes. */
import type { Selectable } from 'kysely';

export interface AgentsTable {
  /** `Agent:<uuid>`. */
  id: string;
  platform_id: string;
  /** The customer every request of the agent is bound to. */
  customer_id: string;
  name: string;
  is_paused: number;
  /** 1 once a device code was redeemed (an access token exists). */
  is_connected: number;
  /** AgentPolicy as JSON, exactly as the wire shows it. */
  policy: string;
  /**
   * Usage counters in the policy's limit currency. They belong to the platform-clock UTC day
   * `usage_day` (YYYY-MM-DD) and month `usage_month` (YYYY-MM); on another day/month they read as 0.
   */
  usage_day: string;
  daily_count: number;
  daily_spend: number;
  usage_month: string;
  monthly_spend: number;
  created_at: string;
  updated_at: string;
  /** Set by DELETE /agents/{id}: the agent is gone for every route, its token stops working. */
  deleted_at: string | null;
}

export interface AgentDeviceCodesTable {
  /** SHA-256 (hex) of the upper-cased code; the code itself is never stored. */
  code_hash: string;
  platform_id: string;
  agent_id: string;
  expires_at: string;
  redeemed_at: string | null;
  /** Set when a newer code replaced this unredeemed one. */
  superseded_at: string | null;
  created_at: string;
}

export interface AgentTokensTable {
  /** SHA-256 (hex) of the `gat_…` access token; the token itself is never stored. */
  token_hash: string;
  platform_id: string;
  agent_id: string;
  created_at: string;
}

export interface AgentActionsTable {
  /** `AgentAction:<uuid>`. */
  id: string;
  platform_id: string;
  agent_id: string;
  customer_id: string;
  platform_customer_id: string;
  /** EXECUTE_QUOTE, TRANSFER_OUT or TRANSFER_IN. */
  type: string;
  /** PENDING_APPROVAL, APPROVED, REJECTED or FAILED. */
  status: string;
  quote_id: string | null;
  /** AgentTransferDetails as JSON (transfers only). */
  transfer_details: string | null;
  /** The request to run on approval (transfer body, or `{walletSignature?}` for a quote), as JSON. */
  request: string;
  transaction_id: string | null;
  rejection_reason: string | null;
  failure_reason: string | null;
  created_at: string;
  updated_at: string;
}

/** Which agent created a quote: agents see only their own quotes. */
export interface AgentQuotesTable {
  quote_id: string;
  platform_id: string;
  agent_id: string;
  created_at: string;
}

export type AgentRow = Selectable<AgentsTable>;
export type AgentActionRow = Selectable<AgentActionsTable>;
export type AgentDeviceCodeRow = Selectable<AgentDeviceCodesTable>;
