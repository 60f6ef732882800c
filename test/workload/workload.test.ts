/**
 * The seeded workload with its auditor (test/workload/lib): fixed seeds, a bounded number of steps,
 * on the lane's store, against an in-process server with a frozen clock. Each step's response,
 * every balance, the touched resources and the ledger check are audited against the model; at the
 * end every delayed outcome has fired and every committed webhook event was delivered. Longer runs:
 * `npm run test:workload -- --seed N --steps M [--seeds S] [--store postgres]`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopWatchdog } from '../helpers/loop-watchdog.ts';
import { laneStore } from '../helpers/server.ts';
import { Workload, type WorkloadResult } from './lib/driver.ts';
import { startTarget, type Target } from './lib/target.ts';

const SEEDS = [107, 111, 114, 118];
const STEPS = 160;

/** What the fixed seeds must exercise between them, so a change in the generator cannot quietly drop a path. */
const REQUIRED = [
  // every transfer suffix, both ways
  ...['001', '002', '003', '004', '005'].flatMap((s) => [`transfer-out USD …${s} → 201`, `transfer-in …${s} → 201`]),
  /^transfer-out \w+ …\d+ → 400 INVALID_AMOUNT$/,
  /^transfer-out \w+ …\d+ → 400 AMOUNT_OUT_OF_RANGE$/,
  /^transfer-out \w+ …\d+ \(whole balance\) → 201$/,
  /^transfer-out EUR …\d+ → 201$/,
  // quotes: locked and immediate, every destination suffix and the UMA parties
  ...['001', '002', '003', '004', '005', '006', '007'].map((s) => new RegExp(`^quote (locked|immediate) \\w+ → (USD|EUR) …${s} → 201$`)),
  /^quote locked \w+ → .* → 201$/,
  /^quote immediate \w+ → .* → 201$/,
  /^quote \w+ RECEIVING → .* → 201$/,
  /^quote \w+ \w+ → internal → 201$/,
  ...['$success.usd', '$success.eur', '$success.mxn', '$pending.long.usd', '$fail.compliance.usd'].map(
    (n) => new RegExp(`^quote \\w+ \\w+ → \\${n} → 201$`),
  ),
  /^quote \w+ \w+ → \$nobody\.usd → 404 UMA_NOT_FOUND$/,
  /^quote .* → 400 AMOUNT_OUT_OF_RANGE$/,
  'execute → 200',
  // real-time funding
  /^real-time quote locked \w+ → .* → 201$/,
  'sandbox send → 200',
  'sandbox send (wrong amount) → 200',
  'execute → 409 CONFLICT',
  'execute → 400 INVALID_AMOUNT',
  // cancels
  'cancel TRANSFER_OUT PENDING → 200',
  'cancel TRANSFER_IN PENDING → 200',
  /^cancel \w+ (COMPLETED|FAILED) → 409 TRANSACTION_NOT_CANCELLABLE$/,
  /^cancel (QUOTE|UMA_RECEIVE) \w+ → 400 INVALID_INPUT$/,
  // incoming UMA payments and the platform's decision
  'uma receive from $success.usd → 200',
  'uma receive from $fail.compliance.usd → 200',
  'approve incoming → 200',
  'reject incoming → 200',
  /^(approve|reject) incoming → 409 TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL$/,
  // delayed outcomes, through the clock
  'timer SETTLE',
  'timer FAIL',
  'timer RETURN',
  'timer EXPIRE',
  'timer APPROVAL_TIMEOUT',
  'advance small',
  'advance medium',
  'advance large',
  // embedded wallets: OTP login, signed executes
  'wallet first login',
  'execute wallet signed → 200',
  'execute wallet unsigned → 202',
  /^wallet quote immediate .* → 400 INVALID_INPUT$/,
  // agents under AUTO and APPROVAL_REQUIRED, approvals and rejections
  'agent transfer-out AUTO → 201',
  'agent transfer-out APPROVAL_REQUIRED → 201',
  'agent transfer-in AUTO → 201',
  /^agent transfer-\w+ \w+ → 403 FORBIDDEN$/,
  /^agent quote locked .* → 201$/,
  'agent execute AUTO → 200',
  'agent execute APPROVAL_REQUIRED → 200',
  /^approve agent action \w+ → APPROVED → 200$/,
  /^reject agent action \w+ → 200$/,
  // idempotency
  'idempotent replay',
  'idempotency key reused with another body',
  // concurrent spends from one account
  'race with losers',
  // receiver lookups, and quotes that name them (docs/lookups.md)
  ...['$success.usd', '$success.eur', '$success.mxn'].map((n) => `lookup ${n} → 200`),
  'lookup external account → 200',
  'lookup $nobody.usd → 404 UMA_NOT_FOUND',
  /^lookup quote \w+ \w+ → \$\S+ → 201$/,
  /^lookup quote \w+ \w+ → (USD|EUR) …\d+ → 201$/,
  'lookup quote (unknown lookupId) → 404 LOOKUP_REQUEST_NOT_FOUND',
  "lookup quote (another receiver's lookupId) → 400 INVALID_INPUT",
  "lookup quote (another sender's lookupId) → 400 INVALID_INPUT",
  'lookup quote (payer data missing) → 400 MISSING_MANDATORY_USER_INFO',
  // invitations (docs/invitations.md): the lifecycle and the refusals of each final state
  'invitation create → 201',
  'invitation claim PENDING → 200',
  'invitation claim CLAIMED → 400 INVITATION_ALREADY_CLAIMED',
  'invitation cancel PENDING → 200',
  /^invitation (claim|cancel) CANCELLED → 400 INVITATION_CANCELLED$/,
  /^invitation (claim|cancel) EXPIRED → 400 EXPIRED$/,
  'invitation claim unknown → 404 INVITATION_NOT_FOUND',
  // bulk customer import (docs/bulk-import.md): its customers join the model
  'bulk import upload → 202',
  'bulk import (duplicate in the file) → COMPLETED',
  'bulk import (duplicate of a customer) → COMPLETED',
  // Strong Customer Authentication (issue #23): an EEA customer's payments wait for its authorisation;
  // no unauthorised quote moves money (the auditor's ledger check), and a lapsed challenge fails it
  'sca execute → 200',
  /^sca quote immediate .* → 202$/,
  'sca execute → 400 INVALID_AMOUNT',
  'sca execute (own account) → 200',
  'sca login → 200',
  'sca authorize → 200',
  'sca authorize → 400 INVALID_AMOUNT',
  'sca authorize → 409 SCA_SESSION_REQUIRED',
  'sca authorize (wrong code) → 400 INVALID_INPUT',
  /^sca authorize( \(wrong code\))? → 429 RATE_LIMITED$/,
  /^sca authorize( \(wrong code\))? → 409 CONFLICT$/,
  'sca password reset → 200',
  'sca idempotent replay',
  'timer SCA_LAPSE',
  // Cards (issue #24, docs/cards.md): a KYC-approved cardholder's funded USD account funds its cards; the
  // model predicts every decision, hold, settlement and return, and audits the card ledger entry by entry
  'cardholder',
  'card create → 201',
  'card create (provisioning DELAYED) → 201',
  'card create (provisioning NEVER) → 201',
  'card create (provisioning REJECT) → 201',
  'card create (KYC PENDING) → 400 CARDHOLDER_KYC_NOT_APPROVED',
  /^card create \((EUR source|USD and EUR sources|another holder's account)\) → 400 FUNDING_SOURCE_INELIGIBLE$/,
  'card create (platformCardId taken) → 409 CONFLICT',
  'timer CARD_PROVISION',
  'card patch ACTIVE→FROZEN → 200',
  'card patch FROZEN→ACTIVE → 200',
  /^card patch (ACTIVE|FROZEN)→CLOSED → 200$/,
  'card patch CLOSED→CLOSED → 409 CARD_ALREADY_CLOSED',
  /^card patch (CLOSED|PROCESSING)→\w+ → 409 INVALID_STATE_TRANSITION$/,
  /^card patch (limit|fundingSources) → 409 CARD_NOT_MUTABLE$/,
  'card patch fundingSources → 200',
  'card patch fundingSources → 400 FUNDING_SOURCE_INELIGIBLE',
  'card patch limit → 200',
  'card authorization → 202',
  'card authorization (declined INSUFFICIENT_FUNDS) → 202',
  /^card \w+ \(declined INSUFFICIENT_FUNDS, descriptor …002\) → 202$/,
  /^card \w+ \(declined CARD_PAUSED, descriptor …003\) → 202$/,
  /^card \w+ \(declined CARD_PAUSED\) → 202$/,
  /^card \w+ \(declined CARD_CLOSED\) → 202$/,
  /^card \w+ \(declined EXCEEDS_MAX_SPEND_PER_TRANSACTION\) → 202$/,
  /^card \w+ \(declined VELOCITY_LIMIT_EXCEEDED\) → 202$/,
  /^card \w+ \(pull delayed\) → 202$/,
  'timer CARD_PULL_CONFIRM',
  /^card \w+ \(pull fails: EXCEPTION\) → 202$/,
  'card financial_authorization → 202',
  'card credit_authorization → 202',
  'card financial_credit_authorization → 202',
  'card credit_authorization_advice → 202',
  'card balance_inquiry → 202',
  'card clearing → 202',
  'card clearing (partial) → 202',
  'card clearing (exact) → 202',
  'card clearing (post-hoc pull) → 202',
  'card clearing (EXCEPTION) → 202',
  'card clearing (expiry) → 202',
  /^card clearing \(credit (partial|exact|over)\) → 202$/,
  'card clearing (not open) → 400 INVALID_INPUT',
  'card return → 202',
  'card return (partial) → 202',
  'card return (full) → 202',
  'card return (too much) → 400 INVALID_INPUT',
  'card return_reversal (covered) → 202',
  'card return_reversal (EXCEPTION) → 202',
  'card authorization_advice (up) → 202',
  'card authorization_advice (down) → 202',
  'card authorization_advice (up beyond the balance, declined INSUFFICIENT_FUNDS) → 202',
  'card authorization_advice (below what settled) → 400 INVALID_INPUT',
  "card clearing (another card's transaction) → 404 TRANSACTION_NOT_FOUND",
  'card authorization (unknown card) → 404 REFERENCE_NOT_FOUND',
  'card authorization (EUR) → 400 INVALID_INPUT',
  'timer CARD_HOLD_EXPIRY',
];

let target: Target;
const results: WorkloadResult[] = [];
// The server runs in this process: no step may block its event loop for more than 200 ms.
const watchdog = startLoopWatchdog();

beforeAll(async () => {
  target = await startTarget({ store: laneStore(), databaseUrl: process.env.TEST_DATABASE_URL, mode: 'in-process' });
});
afterAll(async () => {
  await target?.close();
  await watchdog.stop();
});

describe(`seeded workload with an auditor (${laneStore()})`, () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: ${STEPS} steps agree with the model, the ledger and the webhook outbox`, async () => {
      const r = await new Workload({ seed, steps: STEPS, target, watchdog }).run();
      results.push(r);
      expect(r.transactions).toBeGreaterThan(STEPS / 4);
      expect(r.webhookEvents).toBeGreaterThan(r.transactions);
      console.log(
        `[workload ${laneStore()}] seed ${seed}: ${STEPS} steps in ${(r.durationMs / 1000).toFixed(1)} s, ${r.transactions} transactions, ${r.webhookEvents} webhook events`,
      );
    }, 120_000);
  }

  it('the fixed seeds between them exercise every path the workload knows', () => {
    expect(results).toHaveLength(SEEDS.length);
    const seen = new Set(results.flatMap((r) => r.features));
    const missing = REQUIRED.filter((f) => (typeof f === 'string' ? !seen.has(f) : ![...seen].some((x) => f.test(x))));
    expect(missing.map(String), `exercised:\n${[...seen].sort().join('\n')}`).toEqual([]);
  });

  it('a seed replays exactly: the same operations and amounts, and the same answers', async () => {
    const a = await new Workload({ seed: 104, steps: 40, target }).run();
    const b = await new Workload({ seed: 104, steps: 40, target }).run();
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(a.fingerprint.split('\n').length).toBeGreaterThan(40);
  }, 120_000);
});
