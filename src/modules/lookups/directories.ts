/**
 * The two directories: UMA providers (GET /uma-providers) and VASPs (GET /vasps). Both are fixed
 * sandbox data, the same for every platform, paged by keyset on their natural key (a provider's
 * domain, a VASP's name). Pure: no SQL, no HTTP.
 *
 * UMA providers: the sandbox's own provider — the domain its receivers live at (config
 * `sandboxUmaDomain`), with the currencies of those receivers — is the one a platform can pay, so
 * it alone is on the allow list. The others are fictitious (domains under the reserved `.example`
 * TLD), listed so that filters, paging and `hasBlockedProviders` have something to act on; their
 * addresses are 404 `UMA_NOT_FOUND` like any address outside the sandbox.
 *
 * VASPs: well-known exchanges, by the name a wallet external account carries as `vaspName`.
 */
import { errors } from '../../http/errors.ts';
import { currency, findCurrency } from '../../lib/currencies.ts';
import { pageOf, type Page, type PageRequest } from '../../lib/paging.ts';
import { SANDBOX_UMA_RECEIVERS } from '../payments/sandbox-outcomes.ts';
import type { UmaProviderQueryT, UmaProviderWire, VaspWire } from './lookups.schemas.ts';

interface Provider {
  name: string;
  domain: string;
  regions: readonly string[];
  currencies: readonly string[];
  allowed: boolean;
}

/** The sandbox provider's regions: where its receivers' currencies (USD, EUR, MXN) are used. */
const SANDBOX_REGIONS = ['US', 'MX', 'DE', 'ES', 'FR', 'IT', 'NL'];

/** The fictitious providers: not on any platform's allow list (a sandbox platform pays sandbox addresses only). */
const OTHER_PROVIDERS: readonly Provider[] = [
  {
    name: 'Example Pay Europe',
    domain: 'eu.pay.example',
    regions: ['AT', 'BE', 'DE', 'ES', 'FR', 'IE', 'IT', 'NL', 'PT'],
    currencies: ['EUR'],
    allowed: false,
  },
  { name: 'Example Remesas', domain: 'remesas.example', regions: ['MX', 'US'], currencies: ['MXN', 'USD'], allowed: false },
  { name: 'Example Padala', domain: 'padala.example', regions: ['PH'], currencies: ['PHP', 'USD'], allowed: false },
  { name: 'Example Naira Wallet', domain: 'naira.example', regions: ['NG'], currencies: ['NGN'], allowed: false },
  { name: 'Example Pix Wallet', domain: 'pix.example', regions: ['BR'], currencies: ['BRL'], allowed: false },
  { name: 'Example UPI Wallet', domain: 'upi.example', regions: ['IN'], currencies: ['INR'], allowed: false },
  { name: 'Example Sterling', domain: 'sterling.example', regions: ['GB'], currencies: ['GBP'], allowed: false },
];

let cached: { domain: string; providers: readonly Provider[] } | undefined;

/** Every provider, the sandbox's first (built once per sandbox domain). */
function providers(sandboxDomain: string): readonly Provider[] {
  if (cached?.domain === sandboxDomain) return cached.providers;
  const sandboxCurrencies = [...new Set(Object.values(SANDBOX_UMA_RECEIVERS).map((r) => r.currency))];
  const sandbox: Provider = {
    name: 'Sandbox UMA Provider',
    domain: sandboxDomain,
    regions: SANDBOX_REGIONS,
    currencies: sandboxCurrencies,
    allowed: true,
  };
  // A configured sandbox domain that happens to be one of the fictitious ones replaces it.
  const list = [sandbox, ...OTHER_PROVIDERS.filter((p) => p.domain !== sandboxDomain)];
  cached = { domain: sandboxDomain, providers: list };
  return list;
}

function providerToWire(p: Provider): UmaProviderWire {
  return {
    name: p.name,
    supportedRegions: [...p.regions],
    domain: p.domain,
    supportedCurrencies: p.currencies.map(currency),
    allowListStatus: p.allowed,
  };
}

/**
 * GET /uma-providers: filtered by a region (`countryCode`), a currency (`currencyCode`; unknown is
 * 400 `INVALID_CURRENCY`) and, with `hasBlockedProviders=false`, the allow list; ordered by domain
 * (`sortOrder`, descending by default); `totalCount` counts every match.
 */
export function listUmaProviders(sandboxDomain: string, q: UmaProviderQueryT, page: PageRequest): Page<UmaProviderWire> {
  if (q.currencyCode !== undefined && !findCurrency(q.currencyCode)) {
    throw errors.invalidCurrency(q.currencyCode, 'currencyCode');
  }
  const desc = (q.sortOrder ?? 'desc') === 'desc';
  const matches = providers(sandboxDomain)
    .filter((p) => q.countryCode === undefined || p.regions.includes(q.countryCode))
    .filter((p) => q.currencyCode === undefined || p.currencies.includes(q.currencyCode))
    .filter((p) => q.hasBlockedProviders !== false || p.allowed)
    .map((p) => ({ id: p.domain, p }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * (desc ? -1 : 1));
  return keysetPage(matches, page, desc, (m) => providerToWire(m.p));
}

/** Ordered by `vaspName`. */
const VASPS: readonly VaspWire[] = [
  { vaspName: 'Binance', url: 'https://www.binance.com' },
  { vaspName: 'Bitfinex', url: 'https://www.bitfinex.com' },
  { vaspName: 'Bitso', url: 'https://bitso.com' },
  { vaspName: 'Bitstamp', url: 'https://www.bitstamp.net' },
  { vaspName: 'Bybit', url: 'https://www.bybit.com' },
  { vaspName: 'Coinbase', url: 'https://www.coinbase.com' },
  { vaspName: 'Crypto.com', url: 'https://crypto.com' },
  { vaspName: 'Gemini', url: 'https://www.gemini.com' },
  { vaspName: 'Kraken', url: 'https://www.kraken.com' },
  { vaspName: 'KuCoin', url: 'https://www.kucoin.com' },
  { vaspName: 'OKX', url: 'https://www.okx.com' },
  { vaspName: 'Upbit', url: 'https://upbit.com' },
];

/** GET /vasps: the directory by name (no filters: the live API leaves searching to the client). */
export function listVasps(page: PageRequest): Page<VaspWire> {
  return keysetPage(
    VASPS.map((v) => ({ id: v.vaspName, v })),
    page,
    false,
    (m) => ({ ...m.v }),
  );
}

/** The page after `afterId` of `sorted` (ordered by `id`, descending when `desc`). */
function keysetPage<R extends { id: string }, T>(sorted: R[], page: PageRequest, desc: boolean, map: (r: R) => T): Page<T> {
  const after = page.afterId;
  const rest = after === undefined ? sorted : sorted.filter((r) => (desc ? r.id < after : r.id > after));
  return pageOf(rest.slice(0, page.limit + 1), page.limit, sorted.length, map);
}
