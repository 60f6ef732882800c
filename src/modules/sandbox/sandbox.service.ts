/** Sandbox money operations. */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { postEntry, systemAccount } from '../../ledger/ledger.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import { enqueueEvent } from '../../outbox/outbox.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { internalAccountToWire, type InternalAccountWire } from '../internal-accounts/internal-accounts.service.ts';

/**
 * Credits an internal account from the platform's sandbox issuer, in the caller's transaction,
 * and records INTERNAL_ACCOUNT.BALANCE_UPDATED.
 */
export async function fundInternalAccount(
  trx: Kysely<Database>,
  ctx: AppContext,
  platform: PlatformRow,
  accountId: string,
  amount: number,
): Promise<InternalAccountWire> {
  const account = await findInternalAccount(trx, platform.id, accountId);
  if (!account) throw errors.notFound('Internal account', accountId);
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  await postEntry(trx, {
    id: ctx.deps.ids.next('LedgerEntry'),
    platformId: platform.id,
    kind: 'SANDBOX_FUNDING',
    referenceId: account.id,
    at,
    postings: [
      { accountId: systemAccount(platform.id, 'SANDBOX_ISSUER'), currency: account.currency, bucket: 'AVAILABLE', amount: -amount },
      { accountId: account.id, currency: account.currency, bucket: 'AVAILABLE', amount },
    ],
  });
  // Re-read: the posting's UPDATE holds the row, so this is the balance this transaction commits.
  const updated = (await findInternalAccount(trx, platform.id, accountId))!;
  await enqueueEvent(trx, {
    id: ctx.deps.ids.next('Webhook'),
    platformId: platform.id,
    type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
    resourceId: account.id,
    data: internalAccountToWire(updated, platform.name, false),
    at,
  });
  return internalAccountToWire(updated, platform.name);
}
