/**
 * The crypto-wallet and Lightning variants of `accountInfo` (the same shape in requests and
 * responses; no payment rails). The spec's canonical `LAYER2_WALLET` (the live API's
 * `SPARK_WALLET`) and `CHAIN2_WALLET` (`SOLANA_WALLET`) are emitted; the live names are accepted.
 *
 * Addresses are checked for their chain's shape (EVM: 0x + 40 hex; Solana: base58, 32-44; Tron:
 * T + 33 base58; Spark: bech32-style with a Spark prefix), not for checksums: the live API's own
 * examples carry mixed-case EVM addresses that are not EIP-55 valid.
 */

export interface WalletVariant {
  accountType: string;
  aliases?: string[];
  title: string;
  /** Currencies (asset tickers) the wallet can receive. */
  currencies: string[];
  addressPattern: string;
  addressDescription: string;
  /** Addresses compare case-insensitively for duplicate detection (hex EVM addresses). */
  caseInsensitive?: boolean;
}

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';
const EVM = '^0x[0-9a-fA-F]{40}$';

export const WALLET_VARIANTS: WalletVariant[] = [
  {
    accountType: 'LAYER2_WALLET',
    aliases: ['SPARK_WALLET'],
    title: 'Layer-2 (Spark) Wallet',
    currencies: ['BTC', 'USDB'],
    addressPattern: '^(spark|sparkrt|sparkt|sparks|sparkl|sprt|sp)1[0-9a-z]{20,150}$',
    addressDescription: 'Spark address (spark1…, sparkrt1… on regtest)',
  },
  {
    accountType: 'CHAIN2_WALLET',
    aliases: ['SOLANA_WALLET'],
    title: 'Chain-2 (Solana) Wallet',
    currencies: ['USDC', 'USDT'],
    addressPattern: `^${BASE58}{32,44}$`,
    addressDescription: 'Solana address (base58, 32-44 characters)',
  },
  {
    accountType: 'TRON_WALLET',
    title: 'Tron Wallet',
    currencies: ['USDT'],
    addressPattern: `^T${BASE58}{33}$`,
    addressDescription: 'Tron address (T + 33 base58 characters)',
  },
  {
    accountType: 'POLYGON_WALLET',
    title: 'Polygon Wallet',
    currencies: ['USDC', 'USDT'],
    addressPattern: EVM,
    addressDescription: 'EVM address (0x + 40 hex)',
    caseInsensitive: true,
  },
  {
    accountType: 'BASE_WALLET',
    title: 'Base Wallet',
    currencies: ['USDC'],
    addressPattern: EVM,
    addressDescription: 'EVM address (0x + 40 hex)',
    caseInsensitive: true,
  },
  {
    accountType: 'ETHEREUM_WALLET',
    title: 'Ethereum L1 Wallet',
    currencies: ['USDC', 'USDT'],
    addressPattern: EVM,
    addressDescription: 'EVM address (0x + 40 hex)',
    caseInsensitive: true,
  },
  {
    accountType: 'PLASMA_WALLET',
    title: 'Plasma Wallet',
    currencies: ['USDT'],
    addressPattern: EVM,
    addressDescription: 'EVM address (0x + 40 hex)',
    caseInsensitive: true,
  },
];

/** Lightning: exactly one of a bolt11 invoice, a bolt12 offer or a lightning address. */
export const LIGHTNING = {
  accountType: 'LIGHTNING',
  aliases: ['LIGHTNING_ACCOUNT'],
  title: 'Lightning',
  currencies: ['BTC'],
  invoicePattern: '^(lnbc|lntb|lntbs|lnbcrt|lnsb|LNBC|LNTB|LNTBS|LNBCRT|LNSB)[0-9a-zA-Z]{10,}$',
  bolt12Pattern: '^(lno|LNO)1[0-9a-zA-Z]{10,}$',
  lightningAddressPattern: '^[a-zA-Z0-9._+-]+@[a-zA-Z0-9-]+(\\.[a-zA-Z0-9-]+)*\\.[a-zA-Z]{2,}$',
  fields: ['invoice', 'bolt12', 'lightningAddress'] as const,
};
