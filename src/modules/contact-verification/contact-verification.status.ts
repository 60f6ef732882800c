/**
 * Which contact channels a customer must verify, and their state — the customer's
 * `contactVerification` (the customers module puts it on the wire; the KYC flows ask whether it is
 * complete). Nothing here writes.
 *
 * The requirement: a customer of a SANDBOX platform whose `region` is in the European Economic
 * Area must verify both its email and its phone number (the live API requires contact
 * verification where the customer's provider does, "e.g. EU", and asks for both channels before
 * KYC). PRODUCTION platforms require none: Corridor delivers no email or SMS, so a code could never
 * reach the customer, and a channel that can never be verified would block KYC for good.
 *
 * A channel's state is derived, not stored: VERIFIED while the contact confirmed on it equals the
 * customer's current email / phone number, PENDING otherwise (never confirmed, or changed since).
 */
import type { Kysely } from 'kysely';
import type { CustomerRow, Database, PlatformRow } from '../../store/schema.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { findVerifications } from './contact-verification.repo.ts';
import type { ContactVerificationStatus, ContactVerificationWire } from './contact-verification.schemas.ts';
import type { ContactChannel, ContactVerificationRow } from './contact-verification.tables.ts';

/** The EU's 27 members and Iceland, Liechtenstein and Norway. */
const EEA = new Set('AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO'.split(' '));

const CHANNELS: readonly ContactChannel[] = ['EMAIL', 'PHONE'];

/** The wire key of each channel in `contactVerification`. */
const WIRE_KEY = { EMAIL: 'email', PHONE: 'phone' } as const satisfies Record<ContactChannel, keyof ContactVerificationWire>;

/** The channels `customer` must verify (none when no verification applies to it). */
export function requiredChannels(platform: PlatformRow, customer: Pick<CustomerRow, 'region'>): readonly ContactChannel[] {
  return isSandbox(platform) && customer.region !== null && EEA.has(customer.region) ? CHANNELS : [];
}

/** A contact as it is compared: emails without surrounding blanks and in lowercase, phone numbers as given (E.164). */
export function normalizeContact(channel: ContactChannel, value: string): string {
  return channel === 'EMAIL' ? value.trim().toLowerCase() : value;
}

/** The customer's current contact on `channel` (normalised), or undefined when it has none. */
export function currentContact(customer: Pick<CustomerRow, 'data'>, channel: ContactChannel): string | undefined {
  const data = JSON.parse(customer.data) as { email?: string; phoneNumber?: string };
  const value = channel === 'EMAIL' ? data.email : data.phoneNumber;
  return value === undefined ? undefined : normalizeContact(channel, value);
}

/** The state of one channel of `customer`, from its row (undefined: never sent a code). */
export function channelStatus(
  customer: Pick<CustomerRow, 'data'>,
  channel: ContactChannel,
  row: Pick<ContactVerificationRow, 'verified_contact'> | undefined,
): ContactVerificationStatus {
  const verified = row?.verified_contact ?? null;
  return verified !== null && verified === currentContact(customer, channel) ? 'VERIFIED' : 'PENDING';
}

/** `contactVerification` of one customer from its channel rows, or undefined when it must verify nothing. */
export function contactVerificationWire(
  platform: PlatformRow,
  customer: CustomerRow,
  rows: readonly ContactVerificationRow[],
): ContactVerificationWire | undefined {
  const channels = requiredChannels(platform, customer);
  if (channels.length === 0) return undefined;
  const wire: ContactVerificationWire = {};
  for (const channel of channels) {
    wire[WIRE_KEY[channel]] = channelStatus(
      customer,
      channel,
      rows.find((r) => r.channel === channel),
    );
  }
  return wire;
}

/**
 * `contactVerification` of each of `customers` that must verify something, by customer id: one
 * query for any number of customers, none when no customer needs it.
 */
export async function contactVerificationsOf(
  db: Kysely<Database>,
  platform: PlatformRow,
  customers: readonly CustomerRow[],
): Promise<Map<string, ContactVerificationWire>> {
  const out = new Map<string, ContactVerificationWire>();
  const concerned = customers.filter((c) => requiredChannels(platform, c).length > 0);
  if (concerned.length === 0) return out;
  const rows = await findVerifications(
    db,
    platform.id,
    concerned.map((c) => c.id),
  );
  for (const c of concerned) {
    const wire = contactVerificationWire(
      platform,
      c,
      rows.filter((r) => r.customer_id === c.id),
    );
    if (wire) out.set(c.id, wire);
  }
  return out;
}

/**
 * The channels `customer` must verify that are not VERIFIED yet (empty: contact verification is
 * complete or does not apply). For the flows that wait for it (a KYC link, a verification).
 */
export async function unverifiedChannels(db: Kysely<Database>, platform: PlatformRow, customer: CustomerRow): Promise<ContactChannel[]> {
  const channels = requiredChannels(platform, customer);
  if (channels.length === 0) return [];
  const rows = await findVerifications(db, platform.id, [customer.id]);
  return channels.filter(
    (ch) =>
      channelStatus(
        customer,
        ch,
        rows.find((r) => r.channel === ch),
      ) !== 'VERIFIED',
  );
}
