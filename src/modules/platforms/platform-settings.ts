/** The platform configuration document stored with each platform, and its defaults. */
import type { CardTokenization2faConfig, EmbeddedWalletConfig, FeeConfig, PlatformCurrencyConfig } from '../config/config.schemas.ts';
import type { PlatformRow } from '../../store/schema.ts';

export interface PlatformSettings {
  umaDomain: string;
  proxyUmaSubdomain: string;
  webhookEndpoint?: string;
  supportedCurrencies: PlatformCurrencyConfig[];
  isRegulatedFinancialInstitution: boolean;
  embeddedWalletConfig?: EmbeddedWalletConfig;
  cardTokenization2faConfig?: CardTokenization2faConfig;
  feeConfigs: FeeConfig[];
}

/** Per-transaction bounds a new platform starts with for its fiat currency: 0.01 to 1,000,000.00. */
const DEFAULT_MIN_AMOUNT = 1;
const DEFAULT_MAX_AMOUNT = 100_000_000;

export function defaultSettings(platformUuid: string, fiatCurrency: string): PlatformSettings {
  const slug = platformUuid.replace(/-/g, '').slice(-12);
  return {
    umaDomain: `p${slug}.corridor.localhost`,
    proxyUmaSubdomain: `p${slug}`,
    supportedCurrencies: [
      {
        currencyCode: fiatCurrency,
        minAmount: DEFAULT_MIN_AMOUNT,
        maxAmount: DEFAULT_MAX_AMOUNT,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      },
    ],
    isRegulatedFinancialInstitution: false,
    feeConfigs: [],
  };
}

export function settingsOf(platform: PlatformRow): PlatformSettings {
  return JSON.parse(platform.config) as PlatformSettings;
}

export function isSandbox(platform: PlatformRow): boolean {
  return platform.environment === 'SANDBOX';
}
