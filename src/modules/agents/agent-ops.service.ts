/**
 * What an agent does through /agents/me: everything is bound to the agent's customer. Accounts,
 * transactions and quotes of anyone else (and quotes this agent did not create) are 404, checked
 * here before the shared payment and account services run; money movements become actions
 * (actions.service.ts).
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { platformNowMs } from '../../lib/time.ts';
import type { Database, ExternalAccountRow, InternalAccountRow, TransactionRow } from '../../store/schema.ts';
import { checkExecuteStamp } from '../auth/wallet-actions.service.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { customerHolderName } from '../customers/customers.service.ts';
import { findExternalAccount, listExternalAccounts } from '../external-accounts/external-accounts.repo.ts';
import { createExternalAccount, deleteExternalAccount, externalAccountToWire } from '../external-accounts/external-accounts.service.ts';
import type { ExternalAccountCreate } from '../external-accounts/external-accounts.schemas.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { internalAccountToWire } from '../internal-accounts/internal-accounts.service.ts';
import type { QuoteCreate, QuoteWire, TransactionListQueryT, TransferIn, TransferOut } from '../payments/payments.schemas.ts';
import { createQuote, quoteToWire } from '../payments/quotes.service.ts';
import { findQuote, findTransaction } from '../payments/transactions.repo.ts';
import { listTransactionPage } from '../payments/transactions.service.ts';
import { PULLABLE_ACCOUNT_TYPES } from '../payments/parties.ts';
import { transactionToWire } from '../payments/payment-engine.ts';
import { hasPendingQuoteAction, insertAgentQuote, isAgentQuote, listAgentAccounts } from './agents.repo.ts';
import type { AgentActionWire } from './agents.schemas.ts';
import { policyOf } from './agents.service.ts';
import { quoteMovement, submitAction, type Caller } from './actions.service.ts';
import { requireAllowedAccounts } from './policy.ts';

// ---- scope

async function ownInternal(db: Kysely<Database>, c: Caller, id: string): Promise<InternalAccountRow> {
  const row = await findInternalAccount(db, c.platform.id, id);
  if (!row || row.customer_id !== c.agent.customer_id) throw errors.notFound('Internal account', id);
  return row;
}

async function ownExternal(db: Kysely<Database>, c: Caller, id: string): Promise<ExternalAccountRow> {
  const row = await findExternalAccount(db, c.platform.id, id, 'any');
  if (!row || row.customer_id !== c.agent.customer_id) throw errors.notFound('External account', id);
  return row;
}

/** An account id of either kind, which must be the customer's; returns it when it is internal. */
async function ownAccount(db: Kysely<Database>, c: Caller, id: string): Promise<InternalAccountRow | undefined> {
  if (id.startsWith('ExternalAccount:')) {
    await ownExternal(db, c, id);
    return undefined;
  }
  return ownInternal(db, c, id);
}

function ownCustomer(c: Caller, customerId: string | undefined): void {
  if (customerId !== undefined && customerId !== c.agent.customer_id) throw errors.customerNotFound(customerId);
}

function sameCurrency(a: string, b: string): void {
  if (a !== b) {
    throw new ApiError(400, 'INVALID_CURRENCY', `Transfers move one currency (${a} ≠ ${b}); use a quote to convert`, {
      errors: [{ field: 'destination.accountId', message: `currency ${b} differs from the source's ${a}` }],
    });
  }
}

// ---- transactions

export async function listOwnTransactions(ctx: AppContext, c: Caller, q: Omit<TransactionListQueryT, 'customerId' | 'platformCustomerId'>) {
  return listTransactionPage(ctx.db, c.platform.id, { ...q, customerId: c.agent.customer_id });
}

export async function getOwnTransaction(ctx: AppContext, c: Caller, id: string) {
  const t: TransactionRow | undefined = await findTransaction(ctx.db, c.platform.id, id);
  if (!t || t.customer_id !== c.agent.customer_id) throw new ApiError(404, 'TRANSACTION_NOT_FOUND', `Transaction ${id} not found`);
  return transactionToWire(t);
}

// ---- quotes

/** Creates a quote for the customer from the customer's accounts; the agent alone can see it. */
export async function createOwnQuote(trx: Kysely<Database>, ctx: AppContext, c: Caller, body: QuoteCreate): Promise<QuoteWire> {
  if (body.immediatelyExecute) {
    throw errors.invalidField('immediatelyExecute', 'is not available to agents: execute with POST /agents/me/quotes/{quoteId}/execute, which applies the policy');
  }
  ownCustomer(c, body.source.customerId);
  const internal: string[] = [];
  const src = body.source.sourceType === 'ACCOUNT' ? await ownAccount(trx, c, body.source.accountId) : undefined;
  if (src) internal.push(src.id);
  const dst = body.destination.destinationType === 'ACCOUNT' ? await ownAccount(trx, c, body.destination.accountId) : undefined;
  if (dst) internal.push(dst.id);
  requireAllowedAccounts(policyOf(c.agent), internal);
  const source = body.source.sourceType === 'REALTIME_FUNDING' ? { ...body.source, customerId: c.agent.customer_id } : body.source;
  const quote = await createQuote(trx, ctx, c.platform, { ...body, source });
  await insertAgentQuote(trx, { quote_id: quote.id, platform_id: c.platform.id, agent_id: c.agent.id, created_at: quote.createdAt });
  return quote;
}

export async function getOwnQuote(ctx: AppContext, c: Caller, quoteId: string): Promise<QuoteWire> {
  const q = (await isAgentQuote(ctx.db, c.agent.id, quoteId)) ? await findQuote(ctx.db, c.platform.id, quoteId) : undefined;
  if (!q) throw errors.quoteNotFound(quoteId);
  return quoteToWire(q, platformNowMs(ctx.deps.clock, c.platform));
}

/**
 * Submits the execution of one of the agent's quotes. A quote funded from an embedded wallet
 * needs the wallet signature now (401 otherwise), even when the platform approves it later.
 */
export async function executeOwnQuote(trx: Kysely<Database>, ctx: AppContext, c: Caller, quoteId: string, walletSignature: string | undefined): Promise<AgentActionWire> {
  return submitAction(trx, ctx, c, 'EXECUTE_QUOTE', async () => {
    const q = (await isAgentQuote(trx, c.agent.id, quoteId)) ? await findQuote(trx, c.platform.id, quoteId) : undefined;
    if (!q) throw errors.quoteNotFound(quoteId);
    if (await hasPendingQuoteAction(trx, q.id)) throw errors.conflict(`Quote ${quoteId} already waits for the platform's approval`);
    const nowMs = platformNowMs(ctx.deps.clock, c.platform);
    if (q.status !== 'PENDING') throw errors.conflict(`Quote ${quoteId} is ${q.status} and cannot be executed`);
    if (nowMs >= Date.parse(q.expires_at)) throw errors.conflict(`Quote ${quoteId} expired at ${q.expires_at}`);
    if ((JSON.parse(q.source) as { sourceType: string }).sourceType === 'REALTIME_FUNDING') {
      throw errors.invalidInput('A real-time funded quote executes when its payment instructions are paid, not through an agent action');
    }
    const m = quoteMovement(q);
    const wallet = m.accountId ? await findInternalAccount(trx, c.platform.id, m.accountId) : undefined;
    if (wallet?.type === 'EMBEDDED_WALLET') {
      const instructions = JSON.parse(q.payment_instructions ?? '[]') as { accountOrWalletInfo: { accountType: string; payloadToSign?: string } }[];
      const payload = instructions.find((i) => i.accountOrWalletInfo.accountType === 'EMBEDDED_WALLET')?.accountOrWalletInfo.payloadToSign ?? '';
      await checkExecuteStamp(trx, ctx, c.platform, walletSignature, wallet.id, payload);
    }
    return { movement: m, quoteId: q.id, request: { walletSignature } };
  });
}

// ---- transfers

export async function ownTransferOut(trx: Kysely<Database>, ctx: AppContext, c: Caller, body: TransferOut): Promise<AgentActionWire> {
  return submitAction(trx, ctx, c, 'TRANSFER_OUT', async () => {
    const src = await ownInternal(trx, c, body.source.accountId);
    const dst = await ownExternal(trx, c, body.destination.accountId);
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

export async function ownTransferIn(trx: Kysely<Database>, ctx: AppContext, c: Caller, body: TransferIn): Promise<AgentActionWire> {
  return submitAction(trx, ctx, c, 'TRANSFER_IN', async () => {
    const src = await ownExternal(trx, c, body.source.accountId);
    if (!PULLABLE_ACCOUNT_TYPES.has(src.account_type)) {
      throw errors.invalidField('source.accountId', `external account ${src.id} (${src.account_type}) cannot be pulled from; fund the internal account through its funding instructions`);
    }
    const dst = await ownInternal(trx, c, body.destination.accountId);
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
export async function listOwnInternalAccounts(ctx: AppContext, c: Caller, q: { currency?: string | undefined; type?: string | undefined; limit?: number | undefined; cursor?: string | undefined }) {
  const limit = q.limit ?? 20;
  const allowed = policyOf(c.agent).accountRestrictions?.allowedAccountIds ?? null;
  const { rows, totalCount } = await listAgentAccounts(ctx.db, c.platform.id, c.agent.customer_id, { currency: q.currency, type: q.type, allowed }, limit, decodeCursor(q.cursor));
  const customer = await findCustomer(ctx.db, c.platform.id, c.agent.customer_id);
  const holder = customer ? customerHolderName(customer, c.platform.name) : c.platform.name;
  return toPage(rows, limit, totalCount, (r) => internalAccountToWire(r, holder));
}

export async function listOwnExternalAccounts(ctx: AppContext, c: Caller, q: { currency?: string | undefined; limit?: number | undefined; cursor?: string | undefined }) {
  const limit = q.limit ?? 20;
  const { rows, totalCount } = await listExternalAccounts(ctx.db, c.platform.id, { scope: 'customers', customerId: c.agent.customer_id, currency: q.currency }, limit, decodeCursor(q.cursor));
  return toPage(rows, limit, totalCount, externalAccountToWire);
}

export async function createOwnExternalAccount(ctx: AppContext, c: Caller, body: ExternalAccountCreate) {
  ownCustomer(c, body.customerId);
  return createExternalAccount(ctx, c.platform, { ...body, customerId: c.agent.customer_id });
}

export async function getOwnExternalAccount(ctx: AppContext, c: Caller, id: string) {
  return externalAccountToWire(await ownExternal(ctx.db, c, id));
}

export async function deleteOwnExternalAccount(ctx: AppContext, c: Caller, id: string): Promise<void> {
  await ownExternal(ctx.db, c, id);
  await deleteExternalAccount(ctx, c.platform, id, 'any');
}
