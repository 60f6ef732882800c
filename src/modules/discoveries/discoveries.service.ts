/**
 * The receiving-institution catalogue behind GET /discoveries: a small static list of banks and
 * wallets per country. `bankName` is the canonical value external accounts carry.
 */
import { errors } from '../../http/errors.ts';
import { findCurrency } from '../../lib/currencies.ts';
import type { DiscoveryQueryT, DiscoveryWire } from './discoveries.schemas.ts';

type Entry = readonly [bankName: string, displayName: string];

const BY_COUNTRY: ReadonlyArray<{ country: string; currency: string; institutions: readonly Entry[] }> = [
  {
    country: 'BR',
    currency: 'BRL',
    institutions: [
      ['Banco do Brasil', 'Banco do Brasil'],
      ['Bradesco', 'Banco Bradesco'],
      ['Itau Unibanco', 'Itaú Unibanco'],
      ['Nubank', 'Nu Pagamentos (Nubank)'],
    ],
  },
  {
    country: 'DE',
    currency: 'EUR',
    institutions: [
      ['Commerzbank', 'Commerzbank'],
      ['Deutsche Bank', 'Deutsche Bank'],
      ['N26', 'N26 Bank'],
      ['Sparkasse', 'Sparkasse'],
    ],
  },
  {
    country: 'GB',
    currency: 'GBP',
    institutions: [
      ['Barclays', 'Barclays Bank UK'],
      ['HSBC UK', 'HSBC UK Bank'],
      ['Lloyds Bank', 'Lloyds Bank'],
      ['Monzo', 'Monzo Bank'],
      ['NatWest', 'National Westminster Bank'],
    ],
  },
  {
    country: 'IN',
    currency: 'INR',
    institutions: [
      ['Axis Bank', 'Axis Bank'],
      ['HDFC Bank', 'HDFC Bank'],
      ['ICICI Bank', 'ICICI Bank'],
      ['State Bank of India', 'State Bank of India'],
    ],
  },
  {
    country: 'KE',
    currency: 'KES',
    institutions: [
      ['Equity Bank', 'Equity Bank Kenya'],
      ['M-Pesa', 'Safaricom M-Pesa'],
    ],
  },
  {
    country: 'MX',
    currency: 'MXN',
    institutions: [
      ['BBVA Mexico', 'BBVA México'],
      ['Banorte', 'Banco Mercantil del Norte (Banorte)'],
      ['Santander Mexico', 'Banco Santander México'],
      ['STP', 'Sistema de Transferencias y Pagos (STP)'],
    ],
  },
  {
    country: 'NG',
    currency: 'NGN',
    institutions: [
      ['Access Bank', 'Access Bank'],
      ['First Bank of Nigeria', 'First Bank of Nigeria'],
      ['GTBank', 'Guaranty Trust Bank'],
      ['OPay', 'OPay Digital Services'],
      ['Zenith Bank', 'Zenith Bank'],
    ],
  },
  {
    country: 'PH',
    currency: 'PHP',
    institutions: [
      ['BDO Unibank', 'BDO Unibank'],
      ['BPI', 'Bank of the Philippine Islands'],
      ['GCash', 'GCash'],
      ['Maya', 'Maya Bank'],
      ['Metrobank', 'Metropolitan Bank and Trust'],
    ],
  },
  {
    country: 'US',
    currency: 'USD',
    institutions: [
      ['Bank of America', 'Bank of America'],
      ['Chase', 'JPMorgan Chase Bank'],
      ['Citibank', 'Citibank'],
      ['Wells Fargo', 'Wells Fargo Bank'],
    ],
  },
  {
    country: 'ZA',
    currency: 'ZAR',
    institutions: [
      ['Absa', 'Absa Bank'],
      ['Capitec Bank', 'Capitec Bank'],
      ['FNB', 'First National Bank'],
      ['Nedbank', 'Nedbank'],
      ['Standard Bank', 'Standard Bank of South Africa'],
    ],
  },
];

const byKey = (i: DiscoveryWire) => `${i.country}|${i.bankName}`;

/** Every institution, ordered by country then bankName (code-unit order, so stable everywhere). */
export const INSTITUTIONS: readonly DiscoveryWire[] = BY_COUNTRY.flatMap(({ country, currency, institutions }) =>
  institutions.map(([bankName, displayName]) => ({ bankName, displayName, country, currency })),
).sort((a, b) => (byKey(a) < byKey(b) ? -1 : byKey(a) > byKey(b) ? 1 : 0));

/**
 * Institutions matching both filters (absent filter: any). A well-formed country with no
 * institutions is an empty list; a currency code outside the catalogue is 400 INVALID_CURRENCY.
 */
export function listDiscoveries(q: DiscoveryQueryT): DiscoveryWire[] {
  if (q.currency !== undefined && !findCurrency(q.currency)) throw errors.invalidCurrency(q.currency, 'currency');
  return INSTITUTIONS.filter(
    (i) => (q.country === undefined || i.country === q.country) && (q.currency === undefined || i.currency === q.currency),
  );
}
