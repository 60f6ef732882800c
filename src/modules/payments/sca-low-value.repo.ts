/**
 * The low-value exemption's running totals (migration 0025; sca-gate.ts): one row per customer
 * that has had a payment exempted, declared into the store's `Database` here.
 */
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../../store/schema.ts';

export interface ScaLowValueTable {
  platform_id: string;
  customer_id: string;
  /** Payments exempted since the customer's last authorised one. */
  exempted_count: number;
  /** Their sum in euro cents. */
  exempted_eur_cents: number;
  updated_at: string;
}

declare module '../../store/schema.ts' {
  interface Database {
    sca_low_value: ScaLowValueTable;
  }
}

export async function findLowValue(
  db: Kysely<Database>,
  platformId: string,
  customerId: string,
): Promise<Selectable<ScaLowValueTable> | undefined> {
  return db
    .selectFrom('sca_low_value')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
}

export async function saveLowValue(
  db: Kysely<Database>,
  v: { platformId: string; customerId: string; count: number; eurCents: number; at: string },
): Promise<void> {
  await db
    .insertInto('sca_low_value')
    .values({
      platform_id: v.platformId,
      customer_id: v.customerId,
      exempted_count: v.count,
      exempted_eur_cents: v.eurCents,
      updated_at: v.at,
    })
    .onConflict((oc) =>
      oc.columns(['platform_id', 'customer_id']).doUpdateSet({ exempted_count: v.count, exempted_eur_cents: v.eurCents, updated_at: v.at }),
    )
    .execute();
}
