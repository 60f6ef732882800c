/**
 * Hosted KYC links: `POST /customers/{customerId}/kyc-link` makes a link to a verification page
 * that Corridor serves itself (kyc-links.hosted.ts); submitting that page verifies the customer
 * through the KYC module, exactly as `POST /verifications` does.
 *
 * Rules:
 * - A link belongs to one platform and one customer. Its token (32 random bytes, base64url) is
 *   stored only as its SHA-256; the URL is shown once, in the 201 (and in an Idempotency-Key replay).
 * - It expires 24 hours after it was made, on the platform's clock, and is single-use: submitting
 *   its form uses it; opening the page does not (link previews and reloads must not burn it).
 *   Every call makes a new link; earlier ones stay valid until used or expired.
 * - Making a link changes nothing on the customer. An unknown (or another platform's) customer is
 *   404 USER_NOT_FOUND, a deleted one 410 CUSTOMER_DELETED; one whose contact channels must be
 *   verified first (modules/contact-verification) and are not all VERIFIED, 409 CONFLICT.
 * - `redirectUri`: https://, or http:// for local development (any host on a SANDBOX platform;
 *   only localhost, 127.0.0.1 or [::1] on a PRODUCTION one); no credentials in it.
 * - What submitting the page does (the page's mode):
 *   - the customer is already APPROVED or REJECTED (`decided`): nothing changes; the link is used;
 *   - SANDBOX, a business whose businessInfo.registrationNumber ends in 3 digits (`magic`): the
 *     spec's KYB table decides, as on POST /verifications: 001 PENDING, 002 REJECTED, other APPROVED;
 *   - SANDBOX otherwise (`choose`): the tester picks APPROVED, PENDING (manual review) or REJECTED;
 *   - PRODUCTION (`submit`): the details on file go to review, as POST /verifications sends them.
 *   Each records a Verification and emits VERIFICATION.* and, when the status changes,
 *   CUSTOMER.KYC_* / CUSTOMER.KYB_* — all in the KYC module, in the unit that uses the link.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { CustomerRow, Database, PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { unverifiedChannels } from '../contact-verification/contact-verification.status.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { parseCustomerData, requireCustomer } from '../customers/customers.service.ts';
import { createVerification, type ChosenOutcome } from '../kyc/verifications.service.ts';
import type { VerificationWire } from '../kyc/verifications.schemas.ts';
import { getPlatform } from '../platforms/platforms.repo.ts';
import { kycLinkErrors } from './kyc-links.errors.ts';
import { findKycLink, insertKycLink, markKycLinkUsed } from './kyc-links.repo.ts';
import type { KycLinkCreate, KycLinkWire } from './kyc-links.schemas.ts';
import type { KycLinkRow } from './kyc-links.tables.ts';

/** How long a link works: a day, so a link sent by email can wait for its reader (the live API states no lifetime). */
export const KYC_LINK_TTL_MS = 24 * 3600_000;
/** 256 bits: the token is the only credential the page asks for. */
const TOKEN_BYTES = 32;
/** What a token looks like (base64url of TOKEN_BYTES); anything else is no link, checked before any query. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** The customer's status that verification moves: kybStatus for a business, kycStatus for an individual. */
export type CustomerStatus = 'UNVERIFIED' | 'PENDING' | 'APPROVED' | 'REJECTED' | 'HOLD';

/** What the tester may pick on a sandbox page (form field `outcome`), and what each records. */
export const CHOICES = { APPROVED: 'APPROVED', PENDING: 'PENDING_MANUAL_REVIEW', REJECTED: 'REJECTED' } as const satisfies Record<
  string,
  ChosenOutcome
>;
export type Choice = keyof typeof CHOICES;
const isChoice = (v: string): v is Choice => Object.hasOwn(CHOICES, v);

/** What submitting the page will do (see the module comment). */
export type PageMode =
  | { kind: 'decided'; status: CustomerStatus }
  | { kind: 'magic'; suffix: string; status: 'PENDING' | 'REJECTED' | 'APPROVED' }
  | { kind: 'choose' }
  | { kind: 'submit' };

/** The customer as the page shows it. */
export interface PageCustomer {
  id: string;
  customerType: 'INDIVIDUAL' | 'BUSINESS';
  name: string | undefined;
  email: string | undefined;
  registrationNumber: string | undefined;
  status: CustomerStatus;
}

/** A link that cannot be used, and why: unknown (404), or used, expired or its customer deleted (410). */
export type Unusable = { kind: 'missing' } | { kind: 'used' | 'expired' | 'deleted'; platformName: string };

/** An open link: the page to show. */
export interface OpenLink {
  kind: 'open';
  platformName: string;
  sandbox: boolean;
  expiresAt: string;
  /** Where the browser goes once the form is submitted, if the platform gave one. */
  redirectUri: string | undefined;
  customer: PageCustomer;
  mode: PageMode;
}

/** A submitted link: what it recorded. */
export interface Submitted {
  kind: 'submitted';
  platformName: string;
  sandbox: boolean;
  redirectUri: string | undefined;
  customer: PageCustomer;
  /** The verification the submission recorded; none when the customer was already decided. */
  verification: VerificationWire | undefined;
}

// ── creating a link ───────────────────────────────────────────────────────────────────────────

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `redirectUri` as stored, or a 400 naming it (see the module comment). */
function checkRedirectUri(value: string, platform: PlatformRow): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw kycLinkErrors.badRedirectUri('must be an absolute https:// URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw kycLinkErrors.badRedirectUri('must start with https:// (or http://)');
  if (url.username !== '' || url.password !== '') throw kycLinkErrors.badRedirectUri('must not carry credentials');
  if (url.protocol === 'http:' && platform.environment !== 'SANDBOX' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw kycLinkErrors.badRedirectUri('must start with https:// (http:// only to localhost, 127.0.0.1 or [::1], for local development)');
  }
  return value;
}

/**
 * Makes a link for the customer. `pageBase` is the URL the token is appended to (the route knows
 * where the hosted page is served).
 */
export async function createKycLink(u: Unit, customerId: string, body: KycLinkCreate, pageBase: string): Promise<KycLinkWire> {
  const customer = await requireCustomer(u.trx, u.platform.id, customerId);
  const pending = await unverifiedChannels(u.trx, u.platform, customer);
  if (pending.length > 0) {
    throw kycLinkErrors.contactVerificationIncomplete(
      customer.id,
      pending.map((ch) => (ch === 'EMAIL' ? 'email' : 'phone')),
    );
  }
  const redirectUri = body.redirectUri === undefined ? null : checkRedirectUri(body.redirectUri, u.platform);
  const token = u.deps.secretRng.bytes(TOKEN_BYTES).toString('base64url');
  const expiresAt = iso(u.nowMs + KYC_LINK_TTL_MS);
  await insertKycLink(u.trx, {
    token_hash: tokenHash(token),
    platform_id: u.platform.id,
    customer_id: customer.id,
    redirect_uri: redirectUri,
    created_at: u.at,
    expires_at: expiresAt,
    used_at: null,
    outcome: null,
  });
  return { kycUrl: `${pageBase}${token}`, expiresAt, provider: 'SUMSUB' };
}

// ── the hosted page ───────────────────────────────────────────────────────────────────────────

function statusOf(c: CustomerRow): CustomerStatus {
  return ((c.customer_type === 'BUSINESS' ? c.kyb_status : c.kyc_status) ?? 'UNVERIFIED') as CustomerStatus;
}

function pageCustomer(c: CustomerRow): PageCustomer {
  const data = parseCustomerData(c);
  const business = c.customer_type === 'BUSINESS';
  return {
    id: c.id,
    customerType: business ? 'BUSINESS' : 'INDIVIDUAL',
    name: business ? data.businessInfo?.legalName : data.fullName,
    email: data.email,
    registrationNumber: business ? data.businessInfo?.registrationNumber : undefined,
    status: statusOf(c),
  };
}

/** The spec's sandbox KYB table (POST /verifications applies it; the page only announces it). */
function magicKyb(customer: PageCustomer): PageMode | undefined {
  const suffix = customer.registrationNumber?.slice(-3) ?? '';
  if (customer.customerType !== 'BUSINESS' || !/^\d{3}$/.test(suffix)) return undefined;
  return { kind: 'magic', suffix, status: suffix === '001' ? 'PENDING' : suffix === '002' ? 'REJECTED' : 'APPROVED' };
}

function modeOf(platform: PlatformRow, customer: PageCustomer): PageMode {
  if (customer.status === 'APPROVED' || customer.status === 'REJECTED') return { kind: 'decided', status: customer.status };
  if (platform.environment !== 'SANDBOX') return { kind: 'submit' };
  return magicKyb(customer) ?? { kind: 'choose' };
}

/** Why `link` cannot be used at `nowMs`, or undefined when it can. */
function unusable(link: KycLinkRow, platform: PlatformRow, customer: CustomerRow | undefined, nowMs: number): Unusable | undefined {
  if (!customer) return { kind: 'missing' }; // gone with a sandbox reset
  if (link.used_at !== null) return { kind: 'used', platformName: platform.name };
  if (link.expires_at <= iso(nowMs)) return { kind: 'expired', platformName: platform.name };
  if (customer.deleted_at !== null) return { kind: 'deleted', platformName: platform.name };
  return undefined;
}

/** The platform a token's link belongs to, or undefined when the token names no link. */
export async function linkPlatform(db: Kysely<Database>, token: string): Promise<string | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  return (await findKycLink(db, tokenHash(token)))?.platform_id;
}

/** What opening the page shows (a read: the link stays unused). */
export async function openKycLink(ctx: AppContext, token: string): Promise<OpenLink | Unusable> {
  if (!TOKEN_PATTERN.test(token)) return { kind: 'missing' };
  const link = await findKycLink(ctx.db, tokenHash(token));
  const platform = link && (await getPlatform(ctx.db, link.platform_id));
  if (!link || !platform) return { kind: 'missing' };
  const customer = await findCustomer(ctx.db, platform.id, link.customer_id);
  const why = unusable(link, platform, customer, platformNowMs(ctx.deps.clock, platform));
  if (why || !customer) return why ?? { kind: 'missing' };
  const shown = pageCustomer(customer);
  return {
    kind: 'open',
    platformName: platform.name,
    sandbox: platform.environment === 'SANDBOX',
    expiresAt: link.expires_at,
    redirectUri: link.redirect_uri ?? undefined,
    customer: shown,
    mode: modeOf(platform, shown),
  };
}

/**
 * Submits the page, in a unit of the link's platform: checks the link again under its row lock,
 * verifies the customer as its mode says (the form's `outcome` only where the mode offers one) and
 * uses the link, all in one transaction.
 */
export async function submitKycLink(u: Unit, token: string, form: { outcome?: string }): Promise<Submitted | Unusable> {
  if (!TOKEN_PATTERN.test(token)) return { kind: 'missing' };
  const hash = tokenHash(token);
  // Lock order: the link, then the customer (createVerification locks it again in this transaction).
  const link = await findKycLink(u.trx, hash, u.platform.id, { forUpdate: true });
  if (!link) return { kind: 'missing' };
  const row = await findCustomer(u.trx, u.platform.id, link.customer_id, { forUpdate: true });
  const why = unusable(link, u.platform, row, u.nowMs);
  if (why || !row) return why ?? { kind: 'missing' };
  const mode = modeOf(u.platform, pageCustomer(row));

  let verification: VerificationWire | undefined;
  if (mode.kind === 'choose') {
    const picked = form.outcome;
    if (picked === undefined) throw kycLinkErrors.badFormField('outcome', 'pick an outcome: APPROVED, PENDING or REJECTED');
    if (!isChoice(picked)) throw kycLinkErrors.badFormField('outcome', 'must be APPROVED, PENDING or REJECTED');
    verification = await createVerification(u, row.id, CHOICES[picked]);
  } else {
    if (form.outcome !== undefined) {
      const reason = mode.kind === 'magic' ? 'the registration number decides it' : 'this page offers no choice';
      throw kycLinkErrors.badFormField('outcome', `is not accepted here: ${reason}`);
    }
    if (mode.kind !== 'decided') verification = await createVerification(u, row.id);
  }

  const after = (await findCustomer(u.trx, u.platform.id, row.id)) ?? row;
  const shown = pageCustomer(after);
  if (!(await markKycLinkUsed(u.trx, u.platform.id, hash, u.at, verification?.verificationStatus ?? 'NONE')))
    throw kycLinkErrors.usedMeanwhile();
  return {
    kind: 'submitted',
    platformName: u.platform.name,
    sandbox: u.platform.environment === 'SANDBOX',
    redirectUri: link.redirect_uri ?? undefined,
    customer: shown,
    verification,
  };
}
