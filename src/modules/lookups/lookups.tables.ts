/**
 * Table types of receiver lookups (migration 0017), declared into the store's `Database` by module
 * augmentation so that the area's SQL is typed without editing src/store/schema.ts.
 */
import type { Selectable } from 'kysely';

/** What a lookup looked up: a UMA address or one of the platform's external accounts. */
export type LookupReceiverKind = 'UMA_ADDRESS' | 'EXTERNAL_ACCOUNT';

/**
 * One answered receiver lookup: what `POST /quotes` checks a `lookupId` against. Written by the
 * lookup itself (a GET that records its answer), read by quotes until it expires. Times are on the
 * platform's clock, so a sandbox clock advance expires lookups too.
 */
export interface LookupsTable {
  /** `Lookup:<uuid v7>`: the `lookupId` the response carried. */
  id: string;
  platform_id: string;
  receiver_kind: LookupReceiverKind;
  /** The receiver as a quote's destination names it: the UMA address in lowercase, or the external account id. */
  receiver: string;
  /** The platform's customer the lookup was made for (by `customerId` or `senderUmaAddress`). */
  sender_customer_id: string;
  /** The sending currency the estimated rates were given from. */
  sending_currency: string;
  /** JSON array of the currency codes the receiver accepts (the response's `supportedCurrencies`). */
  currencies: string;
  /** JSON array of `{name, mandatory}`: the response's `requiredPayerDataFields`. */
  required_payer_fields: string;
  created_at: string;
  expires_at: string;
}

export type LookupRow = Selectable<LookupsTable>;

declare module '../../store/schema.ts' {
  interface Database {
    lookups: LookupsTable;
  }
}
