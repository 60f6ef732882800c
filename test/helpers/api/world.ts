/**
 * A "world" of real resources on one platform, built over the HTTP API: a resource of every kind
 * an operation's path or body can name. The fuzzer builds one on platform A (the target) and one on
 * platform B (whose ids A must never reach). Slots are named, so cases pick "the customer" or "the
 * executed transaction" and a run is reproducible while the ids themselves are fresh.
 */
import { expect } from 'vitest';
import { Client, type Creds, type Res } from '../http.ts';
import type { PlatformHandle, TestServer } from '../server.ts';
import { addFirstEmailOtp, otpLogin, signed, stamp, walletSetup, type KeyPair } from '../wallet-auth.ts';
import { businessBody, ownerBody, PDF, sendForm } from '../kyc.ts';
import { usAccountInfo } from '../payments.ts';
import { uniqueAccountNumber, uniqueId } from '../random.ts';

/** Every slot a world fills; each holds a real id (or device code) of that platform. */
export const SLOTS = [
  'customer',
  'business',
  'owner',
  'document',
  'verification',
  'usdAccount',
  'walletAccount',
  'platformAccount',
  'external',
  'platformExternal',
  'usdbExternal',
  'quote',
  'walletQuote',
  'txQuote',
  'txOut',
  'token',
  'webhook',
  'credential',
  'session',
  'delegatedKey',
  'agent',
  'agentApproval',
  'action',
  'agentQuote',
  'agentTx',
  'deviceCode',
  'invitation',
  'bulkJob',
  'umaReceiver',
  'card',
  'stablecoinLink',
  'stablecoin',
  'stablecoinOperation',
] as const;
export type Slot = (typeof SLOTS)[number];

export interface World {
  platform: PlatformHandle;
  ids: Record<Slot, string>;
  /** A token with VIEW only (for 403 cases). */
  viewCreds: Creds;
  /** The access token of the connected AUTO agent (slot `agent`), when the agent routes exist. */
  agentToken?: string;
  /** The wallet's OTP session key (slot `session`). */
  sessionKey: KeyPair;
  /** The UMA address of the customer in slot `customer` (createInvitation names its inviter by it). */
  inviterUma: string;
}

let seq = 0;

function ok(res: Res, status: number, what: string): Res {
  if (res.status !== status) throw new Error(`world: ${what}: expected ${status}, got ${res.status} ${res.text.slice(0, 500)}`);
  return res;
}

/**
 * A one-row customer CSV for `POST /customers/bulk/csv`, its UMA address in the domain of `sameDomainAs`
 * (a UMA address of the platform) and its platformCustomerId new each time.
 */
export function bulkCsvFile(sameDomainAs: string): { bytes: Buffer; type: string; name: string } {
  const domain = sameDomainAs.slice(sameDomainAs.indexOf('@') + 1);
  const id = `bulk-${seq}-${Math.random().toString(36).slice(2, 10)}`;
  const csv = `umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country\n${id}@${domain},${id},INDIVIDUAL,World Bulk,1990-01-02,1 Main St,San Francisco,CA,94105,US\n`;
  return { bytes: Buffer.from(csv), type: 'text/csv', name: 'customers.csv' };
}

/**
 * Builds the world on `p`. `withAgents`: the agent routes exist in the served document (another
 * helper may be adding them), so agent slots are filled; otherwise they hold ids that exist nowhere.
 */
export async function buildWorld(_srv: TestServer, p: PlatformHandle, withAgents: boolean): Promise<World> {
  seq += 1;
  const api = p.api;
  const ids: Partial<Record<Slot, string>> = {};

  // A wallet customer (USD and USDB) with its first EMAIL_OTP credential and an OTP session.
  let wallet = await walletSetup(p);
  // An internal account id ending in 002 or 003 is the sandbox's "ineligible funding source" (cards,
  // about one id in 2,048): the world's card must be funded by this wallet, so take another.
  while (/00[23]$/.test(wallet.accountId)) wallet = await walletSetup(p);
  const customer = wallet.customerId;
  ids.customer = customer;
  ids.walletAccount = wallet.accountId;
  const cred = await addFirstEmailOtp(api, wallet.accountId);
  ids.credential = cred.id;
  const session = await otpLogin(api, cred.id);
  ids.session = session.id;
  // A virtual card of that customer funded by the wallet: slot `card`.
  const card = await api.post('/cards', {
    cardholderId: customer,
    platformCardId: `world-card-${seq}-x`,
    form: 'VIRTUAL',
    fundingSources: [wallet.accountId],
  });
  ids.card = ok(card, 201, 'card').body.id;
  // An ACTIVE delegated key of the wallet for that card, its three legs stamped by that session: slot `delegatedKey`.
  const keyBody = {
    cardId: ids.card,
    internalAccountId: wallet.accountId,
    nickname: 'World key',
  };
  let leg = ok(await api.post('/auth/delegated-keys', keyBody), 202, 'delegated key');
  for (const status of [202, 201]) {
    const retry = signed(await stamp(session.key, leg.body.payloadToSign), leg.body.requestId);
    leg = ok(await api.post('/auth/delegated-keys', keyBody, retry), status, 'delegated key (signed leg)');
  }
  ids.delegatedKey = leg.body.id;
  // A PENDING invitation from that customer: slot `invitation` holds its code.
  const inviterUma: string = ok(await api.get(`/customers/${customer}`), 200, 'inviter').body.umaAddress;
  ids.invitation = ok(await api.post('/invitations', { inviterUma }), 201, 'invitation').body.code;
  // A bulk customer import of one row: slot `bulkJob` holds its job id.
  const bulk = await sendForm(p.api.base, 'POST', '/customers/bulk/csv', {}, bulkCsvFile(inviterUma), p.creds);
  ids.bulkJob = ok(bulk, 202, 'bulk import').body.jobId;
  // A sandbox UMA receiver (the lookups' path parameter): the same address for every platform.
  ids.umaReceiver = '$success.usd@sandbox.uma.money';

  const accounts = ok(await api.get('/customers/internal-accounts', { query: { customerId: wallet.customerId } }), 200, 'accounts');
  const usdAccount = (accounts.body.data as { id: string; balance: { currency: { code: string } }; type: string }[]).find(
    (a) => a.balance.currency.code === 'USD' && a.type !== 'EMBEDDED_WALLET',
  )!.id;
  ids.usdAccount = usdAccount;
  ok(await api.post(`/sandbox/internal-accounts/${usdAccount}/fund`, { amount: 10_000_000 }), 200, 'fund');
  ok(await api.post(`/sandbox/internal-accounts/${ids.walletAccount}/fund`, { amount: 10_000_000 }), 200, 'fund wallet');
  ids.platformAccount = ok(
    await api.get('/platform/internal-accounts', { query: { currency: 'USD' } }),
    200,
    'platform accounts',
  ).body.data[0].id;

  // External accounts: the customer's USD bank account (suffix 001: payments succeed at once),
  // the platform's own, and a USDB wallet address for the wallet-funded quote.
  const account = (suffix: string) => ({
    ...usAccountInfo(suffix),
    accountNumber: uniqueAccountNumber(suffix),
  });
  const external: string = ok(
    await api.post('/customers/external-accounts', { customerId: wallet.customerId, currency: 'USD', accountInfo: account('001') }),
    201,
    'external',
  ).body.id;
  ids.external = external;
  ids.platformExternal = ok(
    await api.post('/platform/external-accounts', { currency: 'USD', accountInfo: account('001') }),
    201,
    'platform external',
  ).body.id;
  const address = `spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6d${String(seq).padStart(4, '0')}001`;
  ids.usdbExternal = ok(
    await api.post('/platform/external-accounts', { currency: 'USDB', accountInfo: { accountType: 'LAYER2_WALLET', address } }),
    201,
    'usdb external',
  ).body.id;
  // A stablecoin provider link, a stablecoin registered on it (PROVISIONED 5 s later on the platform
  // clock) and a WIRE mint to that wallet, awaiting its funds.
  const keyed = (path: string, body: unknown, what: string) =>
    api.post(path, body, { headers: { 'idempotency-key': uniqueId('world-key') } }).then((r) => ok(r, 201, what).body.id as string);
  ids.stablecoinLink = await keyed(
    '/stablecoin-provider-accounts',
    { provider: 'BRALE', apiClientId: uniqueId('world-client'), apiClientSecret: 'world-secret' },
    'stablecoin link',
  );
  const tokenId = `WORLD${uniqueId('T').slice(2).toUpperCase().replace(/[0-9]/g, 'Q')}`;
  ids.stablecoin = await keyed(
    '/stablecoins',
    { providerTokenIdentifier: tokenId, networkTokenIdentifier: `btknrt1${uniqueId('n').slice(2)}`, network: 'SPARK' },
    'stablecoin',
  );
  ok(await api.post('/sandbox/clock/advance', { seconds: 5 }), 200, 'clock for the stablecoin');
  ids.stablecoinOperation = await keyed(
    `/stablecoins/${ids.stablecoin}/mints`,
    { amount: '10000000', fundingSource: { type: 'WIRE' }, destination: { accountId: ids.usdbExternal } },
    'stablecoin mint',
  );

  // KYC: a business customer with a beneficial owner, a document of the wallet customer, a verification.
  const business: string = ok(await api.post('/customers', businessBody()), 201, 'business').body.id;
  ids.business = business;
  ids.owner = ok(await api.post('/beneficial-owners', ownerBody(business)), 201, 'owner').body.id;
  const doc = await sendForm(
    p.api.base,
    'POST',
    '/documents',
    { documentHolder: business, documentType: 'UTILITY_BILL', country: 'US' },
    { bytes: PDF },
    p.creds,
  );
  ids.document = ok(doc, 201, 'document').body.id;
  ids.verification = ok(await api.post('/verifications', { customerId: business }), 200, 'verification').body.id;

  // Payments: a pending locked quote, an executed one, a completed transfer-out, a wallet quote.
  const quoteBody = (source: string, destination: string, amount: number) => ({
    source: { sourceType: 'ACCOUNT', accountId: source },
    destination: { destinationType: 'ACCOUNT', accountId: destination },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  });
  ids.quote = ok(await api.post('/quotes', quoteBody(usdAccount, external, 1_000)), 201, 'quote').body.id;
  const executed = ok(await api.post('/quotes', quoteBody(usdAccount, external, 1_500)), 201, 'quote 2').body.id;
  ids.txQuote = ok(await api.post(`/quotes/${executed}/execute`), 200, 'execute').body.transactionId;
  ids.txOut = ok(
    await api.post('/transfer-out', { source: { accountId: usdAccount }, destination: { accountId: external }, amount: 700 }),
    201,
    'transfer-out',
  ).body.id;
  ids.walletQuote = ok(await api.post('/quotes', quoteBody(wallet.accountId, ids.usdbExternal!, 1_000)), 201, 'wallet quote').body.id;

  // A VIEW-only token for 403 cases, and another token for token paths (which a fuzz case may delete).
  const view = ok(await api.post('/tokens', { name: `fuzz view ${seq}`, permissions: ['VIEW'] }), 201, 'view token').body;
  const viewCreds = { id: view.clientId, secret: view.clientSecret };
  ids.token = ok(await api.post('/tokens', { name: `fuzz path token ${seq}`, permissions: ['VIEW', 'TRANSACT'] }), 201, 'token').body.id;

  const deliveries = ok(await api.get('/webhooks/deliveries', { query: { limit: 1 } }), 200, 'deliveries');
  ids.webhook = deliveries.body.data[0].id;

  let agentToken: string | undefined;
  if (withAgents) {
    const policy = (mode: string) => ({
      permissions: ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES', 'MANAGE_EXTERNAL_ACCOUNTS'],
      defaultExecutionMode: mode,
      spendingLimits: { currency: 'USD', perTransactionLimit: 1_000_000 },
    });
    const redeem = async (code: string) =>
      ok(await new Client(p.api.base).post(`/agents/device-codes/${code}/redeem`), 200, 'redeem').body.accessToken as string;
    const auto = ok(
      await api.post('/agents', { name: 'Fuzz agent', customerId: wallet.customerId, policy: policy('AUTO') }),
      201,
      'agent',
    ).body;
    ids.agent = auto.agent.id;
    agentToken = await redeem(auto.deviceCode.code);
    const agentApi = new Client(p.api.base, { bearer: agentToken });
    ids.agentQuote = ok(await agentApi.post('/agents/me/quotes', quoteBody(usdAccount, external, 900)), 201, 'agent quote').body.id;
    // An AUTO agent's transfer answers with its (APPROVED) action, which names the transaction.
    const agentAction = ok(
      await agentApi.post('/agents/me/transfer-out', {
        source: { accountId: usdAccount },
        destination: { accountId: external },
        amount: 800,
      }),
      201,
      'agent transfer',
    ).body;
    ids.agentTx = agentAction.transaction?.id;

    const approval = ok(
      await api.post('/agents', { name: 'Fuzz approval agent', customerId: wallet.customerId, policy: policy('APPROVAL_REQUIRED') }),
      201,
      'agent 2',
    ).body;
    ids.agentApproval = approval.agent.id;
    const approvalApi = new Client(p.api.base, { bearer: await redeem(approval.deviceCode.code) });
    const pending = await approvalApi.post('/agents/me/transfer-out', {
      source: { accountId: usdAccount },
      destination: { accountId: external },
      amount: 600,
    });
    expect(pending.status, pending.text).toBeLessThan(300);
    ids.action = pending.body.id;
    expect(ids.action, pending.text).toMatch(/^AgentAction:/);

    const unredeemed = ok(
      await api.post('/agents', { name: 'Fuzz unconnected agent', customerId: wallet.customerId, policy: policy('AUTO') }),
      201,
      'agent 3',
    ).body;
    ids.deviceCode = unredeemed.deviceCode.code;
  } else {
    for (const s of ['agent', 'agentApproval', 'action', 'agentQuote', 'agentTx'] as const) ids[s] = `${s}-absent`;
    ids.deviceCode = 'ABSENT-CODE';
  }

  for (const s of SLOTS) if (ids[s] === undefined) throw new Error(`world: slot ${s} not filled`);
  return { platform: p, ids: ids as Record<Slot, string>, viewCreds, agentToken, sessionKey: session.key, inviterUma };
}

/** `<Type>:` of an id (empty for ids without one, such as device codes). */
export function typePrefix(id: string): string {
  const i = id.indexOf(':');
  return i > 0 ? id.slice(0, i + 1) : '';
}

/** Waits until the platform has no job due now (delayed outcomes of a 2xx have run). */
export async function quiesce(srv: TestServer, platformIds: string[], nowMs: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const due = await srv.app.ctx.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('platform_id', 'in', platformIds)
      .where('status', '=', 'PENDING')
      .where('due_at_ms', '<=', nowMs)
      .executeTakeFirstOrThrow();
    if (Number(due.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`jobs still due after 10 s on ${platformIds.join(', ')}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
