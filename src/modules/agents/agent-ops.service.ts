/**
 * What an agent does through /agents/me: everything is bound to the agent's customer. Accounts,
 * transactions and quotes of anyone else (and quotes this agent did not create) are 404, checked
 * here before the shared payment and account services run; money movements become actions
 * (actions.service.ts).
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { pageOf, type Page, type PageRequest } from '../../lib/paging.ts';
import { platformNowMs } from '../../lib/time.ts';
import type { Database, ExternalAccountRow, InternalAccountRow } from '../../store/schema.ts';
import type { AgentRow } from '../../store/schema-agents.ts';
import type { Unit } from '../../unit.ts';
import { checkExecuteStamp } from '../auth/wallet-actions.service.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { customerHolderName } from '../customers/customers.service.ts';
import { findExternalAccount, listExternalAccounts } from '../external-accounts/external-accounts.repo.ts';
import { createExternalAccount, deleteExternalAccount, externalAccountToWire } from '../external-accounts/external-accounts.service.ts';
import type { ExternalAccountCreate, ExternalAccountWire } from '../external-accounts/external-accounts.schemas.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { internalAccountToWire, type InternalAccountWire } from '../internal-accounts/internal-accounts.service.ts';
import type { QuoteCreate, QuoteWire, TransactionListQueryT, TransferIn, TransferOut } from '../payments/payments.schemas.ts';
import { PULLABLE_ACCOUNT_TYPES } from '../payments/parties.ts';
import { transactionToWire } from '../payments/payment-engine.ts';
import { findQuote, findTransaction } from '../payments/payments.repo.ts';
import { createQuote, quoteToWire, walletPayloadOf } from '../payments/quotes.service.ts';
import { listTransactionPage } from '../payments/transactions.service.ts';
import { sameCurrency } from '../payments/transfers.service.ts';
import { hasPendingQuoteAction, insertAgentQuote, isAgentQuote, listAgentAccounts } from './agents.repo.ts';
import type { AgentActionWire } from './agents.schemas.ts';
import { policyOf } from './agents.service.ts';
import { quoteMovement, requireLiveCustomer, submitAction, type Caller } from './actions.service.ts';
import { requireAllowedAccounts } from './policy.ts';

// ---- scope: the agent's platform (`platformId`) and customer

/** Whose accounts an agent may name: its platform's, of its customer. */
type Scope = { platformId: string; agent: Pick<AgentRow, 'customer_id'> };

const scopeOf = (c: Caller): Scope => ({ platformId: c.platform.id, agent: c.agent });
const unitScope = (u: Unit, agent: AgentRow): Scope => ({ platformId: u.platform.id, agent });

async function ownInternal(db: Kysely<Database>, c: Scope, id: string): Promise<InternalAccountRow> {
  const row = await findInternalAccount(db, c.platformId, id);
  if (!row || row.customer_id !== c.agent.customer_id) throw errors.notFound('Internal account', id);
  return row;
}

async function ownExternal(db: Kysely<Database>, c: Scope, id: string): Promise<ExternalAccountRow> {
  const row = await findExternalAccount(db, c.platformId, id, 'any');
  if (!row || row.customer_id !== c.agent.customer_id) throw errors.notFound('External account', id);
  return row;
}

/** An account id of either kind, which must be the customer's; returns it when it is internal. */
async function ownAccount(db: Kysely<Database>, c: Scope, id: string): Promise<InternalAccountRow | undefined> {
  if (id.startsWith('ExternalAccount:')) {
    await ownExternal(db, c, id);
    return undefined;
  }
  return ownInternal(db, c, id);
}

function ownCustomer(agent: Pick<AgentRow, 'customer_id'>, customerId: string | undefined): void {
  if (customerId !== undefined && customerId !== agent.customer_id) throw errors.customerNotFound(customerId);
}

// ---- transactions

export async function listOwnTransactions(
  ctx: AppContext,
  c: Caller,
  q: Omit<TransactionListQueryT, 'customerId' | 'platformCustomerId' | 'cursor' | 'limit'>,
  page: PageRequest,
) {
  return listTransactionPage(ctx.db, c.platform.id, { ...q, customerId: c.agent.customer_id }, page);
}

export async function getOwnTransaction(ctx: AppContext, c: Caller, id: string) {
  const t = await findTransaction(ctx.db, c.platform.id, id);
  if (!t || t.customer_id !== c.agent.customer_id) throw errors.transactionNotFound(id);
  return transactionToWire(t);
}

// ---- quotes

/** Creates a quote for the customer from the customer's accounts; the agent alone can see it. */
export async function createOwnQuote(u: Unit, agent: AgentRow, body: QuoteCreate): Promise<QuoteWire> {
  if (body.immediatelyExecute) {
    throw errors.invalidField(
      'immediatelyExecute',
      'is not available to agents: execute with POST /agents/me/quotes/{quoteId}/execute, which applies the policy',
    );
  }
  const scope = unitScope(u, agent);
  ownCustomer(agent, body.source.customerId);
  await requireLiveCustomer(u.trx, agent);
  const internal: string[] = [];
  const src = body.source.sourceType === 'ACCOUNT' ? await ownAccount(u.trx, scope, body.source.accountId) : undefined;
  if (src) internal.push(src.id);
  const dst = body.destination.destinationType === 'ACCOUNT' ? await ownAccount(u.trx, scope, body.destination.accountId) : undefined;
  if (dst) internal.push(dst.id);
  requireAllowedAccounts(policyOf(agent), internal);
  const source = body.source.sourceType === 'REALTIME_FUNDING' ? { ...body.source, customerId: agent.customer_id } : body.source;
  const quote = await createQuote(u, { ...body, source }, agent.id);
  await insertAgentQuote(u.trx, { quote_id: quote.id, platform_id: u.platform.id, agent_id: agent.id, created_at: quote.createdAt });
  return quote;
}

export async function getOwnQuote(ctx: AppContext, c: Caller, quoteId: string): Promise<QuoteWire> {
  const q = (await isAgentQuote(ctx.db, c.agent.id, quoteId)) ? await findQuote(ctx.db, c.platform.id, quoteId) : undefined;
  if (!q) throw errors.quoteNotFound(quoteId);
  return quoteToWire(q, platformNowMs(ctx.deps.clock, c.platform));
}

/**
 * Submits the execution of one of the agent's quotes. A quote funded from an embedded wallet
 * needs the wallet signature (`walletStamp`) now (401 otherwise), even when the platform approves
 * it later.
 */
export async function executeOwnQuote(
  u: Unit,
  agent: AgentRow,
  quoteId: string,
  walletStamp: string | undefined,
): Promise<AgentActionWire> {
  return submitAction(u, agent.id, 'EXECUTE_QUOTE', async () => {
    const q = (await isAgentQuote(u.trx, agent.id, quoteId)) ? await findQuote(u.trx, u.platform.id, quoteId) : undefined;
    if (!q) throw errors.quoteNotFound(quoteId);
    if (await hasPendingQuoteAction(u.trx, q.id)) throw errors.conflict(`Quote ${quoteId} already waits for the platform's approval`);
    if (q.status !== 'PENDING') throw errors.conflict(`Quote ${quoteId} is ${q.status} and cannot be executed`);
    if (u.nowMs >= Date.parse(q.expires_at)) throw errors.conflict(`Quote ${quoteId} expired at ${q.expires_at}`);
    if ((JSON.parse(q.source) as { sourceType: string }).sourceType === 'REALTIME_FUNDING') {
      throw errors.invalidInput('A real-time funded quote executes when its payment instructions are paid, not through an agent action');
    }
    const m = quoteMovement(q);
    const wallet = m.accountId ? await findInternalAccount(u.trx, u.platform.id, m.accountId) : undefined;
    if (wallet?.type === 'EMBEDDED_WALLET') await checkExecuteStamp(u, walletStamp, wallet.id, walletPayloadOf(q));
    return { movement: m, quoteId: q.id, request: { walletSignature: walletStamp } };
  });
}

// ---- transfers

export async function ownTransferOut(u: Unit, agent: AgentRow, body: TransferOut): Promise<AgentActionWire> {
  return submitAction(u, agent.id, 'TRANSFER_OUT', async () => {
    const scope = unitScope(u, agent);
    const src = await ownInternal(u.trx, scope, body.source.accountId);
    const dst = await ownExternal(u.trx, scope, body.destination.accountId);
    sameCurrency(src.currency, dst.currency);
    // The amount is fixed now (without one, the whole spendable balance), so approval moves what was asked.
    const amount = body.amount ?? Number(src.available);
    if (amount <= 0) throw errors.invalidField('amount', 'the source account has no spendable balance to transfer');
    return {
      movement: { amount, currency: src.currency, accountId: src.id, internalAccountIds: [src.id] },
      transferDetails: { amount, currency: src.currency, sourceAccountId: src.id, destinationAccountId: dst.id },
      request: { ...body, amount },
    };
  });
}

export async function ownTransferIn(u: Unit, agent: AgentRow, body: TransferIn): Promise<AgentActionWire> {
  return submitAction(u, agent.id, 'TRANSFER_IN', async () => {
    const scope = unitScope(u, agent);
    const src = await ownExternal(u.trx, scope, body.source.accountId);
    if (!PULLABLE_ACCOUNT_TYPES.has(src.account_type)) {
      throw errors.invalidField(
        'source.accountId',
        `external account ${src.id} (${src.account_type}) cannot be pulled from; fund the internal account through its funding instructions`,
      );
    }
    const dst = await ownInternal(u.trx, scope, body.destination.accountId);
    sameCurrency(src.currency, dst.currency);
    if (body.amount === undefined) throw errors.invalidField('amount', 'is required for a pull');
    return {
      movement: { amount: body.amount, currency: dst.currency, accountId: dst.id, internalAccountIds: [dst.id] },
      transferDetails: { amount: body.amount, currency: dst.currency, sourceAccountId: src.id, destinationAccountId: dst.id },
      request: body,
    };
  });
}

// ---- accounts

/** The customer's internal accounts the policy lets the agent use. */
export async function listOwnInternalAccounts(
  ctx: AppContext,
  c: Caller,
  q: { currency?: string | undefined; type?: string | undefined },
  { limit, afterId }: PageRequest,
): Promise<Page<InternalAccountWire>> {
  const allowed = policyOf(c.agent).accountRestrictions?.allowedAccountIds ?? null;
  const { rows, totalCount } = await listAgentAccounts(
    ctx.db,
    c.platform.id,
    c.agent.customer_id,
    { currency: q.currency, type: q.type, allowed },
    limit,
    afterId,
  );
  const customer = await findCustomer(ctx.db, c.platform.id, c.agent.customer_id);
  const holder = customer ? customerHolderName(customer, c.platform.name) : c.platform.name;
  return pageOf(rows, limit, totalCount, (r) => internalAccountToWire(r, holder));
}

export async function listOwnExternalAccounts(
  ctx: AppContext,
  c: Caller,
  q: { currency?: string | undefined },
  { limit, afterId }: PageRequest,
): Promise<Page<ExternalAccountWire>> {
  const { rows, totalCount } = await listExternalAccounts(
    ctx.db,
    c.platform.id,
    { scope: 'customers', customerId: c.agent.customer_id, currency: q.currency },
    limit,
    afterId,
  );
  return pageOf(rows, limit, totalCount, externalAccountToWire);
}

/** Registers an external account for the agent's customer (`customerId` may be left out). */
export async function createOwnExternalAccount(u: Unit, agent: AgentRow, body: ExternalAccountCreate) {
  ownCustomer(agent, body.customerId);
  return createExternalAccount(u, { ...body, customerId: agent.customer_id });
}

export async function getOwnExternalAccount(ctx: AppContext, c: Caller, id: string) {
  return externalAccountToWire(await ownExternal(ctx.db, scopeOf(c), id));
}

export async function deleteOwnExternalAccount(u: Unit, agent: AgentRow, id: string): Promise<void> {
  await ownExternal(u.trx, unitScope(u, agent), id);
  await deleteExternalAccount(u, id, 'any');
}
