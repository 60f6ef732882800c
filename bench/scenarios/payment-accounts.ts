/**
 * payment-accounts: the `payment` request, but paid from many accounts in turn instead of one —
 * ACCOUNTS customers, each with a funded USD internal account, pay a succeeding external account with
 * `POST /quotes {immediatelyExecute: true}`, request n from account n mod ACCOUNTS. `payment` is the
 * worst case for PostgreSQL (every request and settlement queues on one account row's lock); this
 * is the case of a platform whose customers pay at once. After the run the ledger check must be clean.
 */
import { awaitSettled, fundedPayer, verifyLedgerAndSettlement } from './payment.ts';
import type { CorridorHandle, HttpRequest, Scenario } from './types.ts';

const ACCOUNTS = 100;
/** Amount per payment (cents); each account is funded for far more than a run can spend. */
const AMOUNT = 100;
const FUNDING = 100_000_000_000;

export const paymentAccountsScenario: Scenario = {
  name: 'payment-accounts',
  summary: `POST /quotes with immediatelyExecute from ${ACCOUNTS} customers' accounts in turn (no shared balance row)`,
  targets: { maxP99Ms: 50 },
  async setup(corridor) {
    const creds = await corridor.newPlatform('Bench payments from many accounts');
    const headers = { authorization: creds.authorization };
    const base = corridor.basePath;
    // The platform's own account funds nothing here; its external account is the payee.
    const { externalId } = await fundedPayer(corridor, headers, 'payment-accounts');
    const accounts: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) accounts.push(await fundedCustomerAccount(corridor, headers, i));
    const path = `${base}/quotes`;
    const requestHeaders = { ...headers, 'content-type': 'application/json' };
    // One serialised body per account, built once: the factory only picks.
    const requests: HttpRequest[] = accounts.map((accountId) => ({
      method: 'POST',
      path,
      headers: requestHeaders,
      body: JSON.stringify({
        source: { sourceType: 'ACCOUNT', accountId },
        destination: { destinationType: 'ACCOUNT', accountId: externalId },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: AMOUNT,
        immediatelyExecute: true,
      }),
    }));
    const probe = await corridor.request('POST', path, { headers, json: JSON.parse(requests[0]!.body!) });
    if (probe.status !== 201) throw new Error(`payment-accounts: probe answered ${probe.status}: ${JSON.stringify(probe.body)}`);
    return {
      request: (seq) => requests[seq % ACCOUNTS]!,
      baseline: { method: 'POST', path, status: 201, body: probe.body },
      verify: () => verifyLedgerAndSettlement(corridor, creds, 'payment-accounts'),
      settle: () => awaitSettled(corridor, creds),
    };
  },
};

/** A new customer's USD internal account, funded. */
async function fundedCustomerAccount(corridor: CorridorHandle, headers: Record<string, string>, i: number): Promise<string> {
  const base = corridor.basePath;
  const c = await corridor.request('POST', `${base}/customers`, {
    headers,
    json: {
      customerType: 'INDIVIDUAL',
      platformCustomerId: `bench-payer-${i}`,
      fullName: `Bench Payer ${i}`,
      birthDate: '1990-01-15',
      nationality: 'US',
    },
  });
  if (c.status !== 201) throw new Error(`payment-accounts: customer answered ${c.status}: ${JSON.stringify(c.body)}`);
  const customerId = (c.body as { id: string }).id;
  const list = await corridor.request(
    'GET',
    `${base}/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}&currency=USD`,
    { headers },
  );
  const accountId = (list.body as { data: { id: string }[] }).data[0]?.id;
  if (!accountId) throw new Error(`payment-accounts: customer ${customerId} has no USD internal account: ${JSON.stringify(list.body)}`);
  const f = await corridor.request('POST', `${base}/sandbox/internal-accounts/${accountId}/fund`, { headers, json: { amount: FUNDING } });
  if (f.status !== 200) throw new Error(`payment-accounts: funding answered ${f.status}: ${JSON.stringify(f.body)}`);
  return accountId;
}
