/** The fixed sandbox data of the lookups area: network fees, and the directories' order and paging. */
import { describe, expect, it } from 'vitest';
import { CRYPTO_NETWORKS } from '../../src/modules/lookups/lookups.schemas.ts';
import { listUmaProviders, listVasps } from '../../src/modules/lookups/directories.ts';
import { NETWORK_FEES, networkPart } from '../../src/modules/lookups/withdrawal-fees.ts';

const AT = Date.parse('2026-01-01T00:00:00Z');

describe('network fees', () => {
  it('every network has a fee, its raw fee an exact JSON integer', () => {
    expect(Object.keys(NETWORK_FEES).sort()).toEqual([...CRYPTO_NETWORKS].sort());
    for (const [network, f] of Object.entries(NETWORK_FEES)) {
      expect(Number.isSafeInteger(f.networkFee), network).toBe(true);
      expect(Number.isSafeInteger(f.usdMicros), network).toBe(true);
      expect(f.networkFee >= 0 && f.usdMicros >= 0, network).toBe(true);
      expect(f.networkFee === 0, `${network}: a free network is worth nothing`).toBe(f.usdMicros === 0);
    }
  });

  it('converts the USD value into the withdrawal currency, rounding up; the same asset passes unchanged', () => {
    expect(networkPart(NETWORK_FEES.SOLANA, 'USDC', AT)).toBe(5_000n);
    expect(networkPart(NETWORK_FEES.TRON, 'USDT', AT)).toBe(3_500_000n);
    expect(networkPart(NETWORK_FEES.LIGHTNING, 'BTC', AT)).toBe(10n);
    // 0.0065 USD of Lightning fee in USDB (6 decimals, pegged): 6,500 micro-USDB.
    expect(networkPart(NETWORK_FEES.LIGHTNING, 'USDB', AT)).toBe(6_500n);
    // 1 micro-USD in BTC is a fraction of a sat: rounded up to one.
    expect(networkPart({ walletType: 'x', feeAsset: 'SOL', networkFee: 1, usdMicros: 1 }, 'BTC', AT)).toBe(1n);
  });
});

describe('directories', () => {
  it('VASPs are listed by name and page without gaps or repeats', () => {
    const all = listVasps({ limit: 100, afterId: undefined });
    const names = all.data.map((v) => v.vaspName);
    expect(names).toEqual([...names].sort());
    expect(new Set(names).size).toBe(names.length);
    const paged: string[] = [];
    let afterId: string | undefined;
    for (;;) {
      const page = listVasps({ limit: 3, afterId });
      paged.push(...page.data.map((v) => v.vaspName));
      if (!page.hasMore) break;
      afterId = page.lastId;
    }
    expect(paged).toEqual(names);
  });

  it('UMA providers have unique domains; the sandbox provider follows the configured domain', () => {
    const page = listUmaProviders('sandbox.uma.money', {}, { limit: 100, afterId: undefined });
    const domains = page.data.map((p) => p.domain);
    expect(new Set(domains).size).toBe(domains.length);
    expect(page.totalCount).toBe(domains.length);
    expect(page.data.filter((p) => p.allowListStatus).map((p) => p.domain)).toEqual(['sandbox.uma.money']);
    // A configured domain that is one of the fictitious ones replaces it rather than repeating it.
    const clash = listUmaProviders('pix.example', {}, { limit: 100, afterId: undefined });
    expect(clash.data.filter((p) => p.domain === 'pix.example')).toHaveLength(1);
    expect(clash.data.find((p) => p.domain === 'pix.example')?.allowListStatus).toBe(true);
  });
});
