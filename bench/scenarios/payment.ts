/**
 * payment: a funded internal account pays a succeeding external account with
 * `POST /quotes {immediatelyExecute: true}` — quote, transaction, ledger hold, events and the
 * settlement job per request. After the run the ledger check must be clean.
 */
import type { CorridorHandle, Credentials, Scenario } from './types.ts';

/** Amount per payment (cents); the account is funded for far more than a run can spend. */
const AMOUNT = 100;
const FUNDING_CALLS = 20;
const FUNDING_PER_CALL = 100_000_000_000;

export const paymentScenario: Scenario = {
  name: 'payment',
  summary: 'POST /quotes with immediatelyExecute to an external account (quote + hold + events + settlement job)',
  targets: { maxP99Ms: 50 },
  async setup(corridor) {
    const creds = await corridor.newPlatform('Bench payments');
    const headers = { authorization: creds.authorization };
    const base = corridor.basePath;
    const { accountId, externalId } = await fundedPayer(corridor, headers, 'payment');
    const path = `${base}/quotes`;
    const body = JSON.stringify({
      source: { sourceType: 'ACCOUNT', accountId },
      destination: { destinationType: 'ACCOUNT', accountId: externalId },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: AMOUNT,
      immediatelyExecute: true,
    });
    const request = { method: 'POST' as const, path, headers: { ...headers, 'content-type': 'application/json' }, body };
    const probe = await corridor.request('POST', path, { headers, json: JSON.parse(body) });
    if (probe.status !== 201) throw new Error(`payment: probe answered ${probe.status}: ${JSON.stringify(probe.body)}`);
    return {
      request,
      baseline: { method: 'POST', path, status: 201, body: probe.body },
      verify: () => verifyLedgerAndSettlement(corridor, creds, 'payment'),
      settle: () => awaitSettled(corridor, creds),
    };
  },
};

/**
 * A platform-owned USD internal account funded for far more than a run can spend, and a US external
 * account whose payments succeed (suffix 001): what `payment` and `flow` pay from and to.
 */
export async function fundedPayer(
  corridor: CorridorHandle,
  headers: Record<string, string>,
  label: string,
): Promise<{ accountId: string; externalId: string }> {
  const base = corridor.basePath;
  const accounts = await corridor.request('GET', `${base}/platform/internal-accounts?currency=USD`, { headers });
  const accountId = (accounts.body as { data: { id: string }[] }).data[0]!.id;
  for (let i = 0; i < FUNDING_CALLS; i++) {
    const f = await corridor.request('POST', `${base}/sandbox/internal-accounts/${accountId}/fund`, {
      headers,
      json: { amount: FUNDING_PER_CALL },
    });
    if (f.status !== 200) throw new Error(`${label}: funding answered ${f.status}: ${JSON.stringify(f.body)}`);
  }
  const ext = await corridor.request('POST', `${base}/platform/external-accounts`, {
    headers,
    json: {
      currency: 'USD',
      accountInfo: {
        accountType: 'US_ACCOUNT',
        accountNumber: '987654321001',
        routingNumber: '021000021',
        bankAccountType: 'CHECKING',
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Bench Receiver',
          birthDate: '1990-01-15',
          nationality: 'US',
          address: { line1: '1 Main St', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' },
        },
      },
    },
  });
  if (ext.status !== 201) throw new Error(`${label}: external account answered ${ext.status}: ${JSON.stringify(ext.body)}`);
  return { accountId, externalId: (ext.body as { id: string }).id };
}

/**
 * After a payment run: the platform's ledger check must be clean; also prints how many payments
 * settlement (background jobs) had not reached yet when the load stopped.
 */
export async function verifyLedgerAndSettlement(corridor: CorridorHandle, creds: Credentials, label: string): Promise<void> {
  const report = await corridor.request('GET', `/_admin/ledger/check?platformId=${encodeURIComponent(creds.platformId)}`, {
    headers: { authorization: `Bearer ${corridor.adminToken}` },
  });
  const r = report.body as { ok: boolean; entries: number; problems: unknown[] };
  const inFlight = await corridor.request('GET', `${corridor.basePath}/transactions?status=PROCESSING&limit=1`, {
    headers: { authorization: creds.authorization },
  });
  const backlog = (inFlight.body as { totalCount?: number }).totalCount;
  console.log(
    `${label}: ledger check ${r.ok ? 'clean' : 'FAILED'} (${r.entries} entries); ${backlog ?? '?'} payments still settling when the load stopped`,
  );
  if (!r.ok) throw new Error(`${label}: ledger check found ${r.problems.length} problem(s): ${JSON.stringify(r.problems.slice(0, 5))}`);
}

/** How long `awaitSettled` waits for the warm-up's settlements before measuring anyway. */
const SETTLE_LIMIT_MS = 60_000;

/**
 * Waits until no payment of the platform is still PROCESSING: the warm-up's settlements are done.
 * A cold server falls behind in its first seconds (compiling, preparing statements, filling
 * caches), and the settlements it owes would otherwise run inside the measured window.
 */
export async function awaitSettled(corridor: CorridorHandle, creds: Credentials): Promise<string> {
  const started = performance.now();
  let backlog = -1;
  while (performance.now() - started < SETTLE_LIMIT_MS) {
    const r = await corridor.request('GET', `${corridor.basePath}/transactions?status=PROCESSING&limit=1`, {
      headers: { authorization: creds.authorization },
    });
    if (r.status !== 200) throw new Error(`settle: GET /transactions answered ${r.status}: ${JSON.stringify(r.body)}`);
    backlog = (r.body as { totalCount: number }).totalCount;
    if (backlog === 0)
      return `warm-up's payments settled after ${((performance.now() - started) / 1000).toFixed(1)} s; measuring from here`;
    await new Promise((res) => setTimeout(res, 100));
  }
  return `${backlog} warm-up payments still settling after ${SETTLE_LIMIT_MS / 1000} s; measuring anyway`;
}
