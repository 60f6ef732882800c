/** The pure side of fault rules: route keys, the checks beyond the schema, precedence and expiry, the dice. */
import { describe, expect, it } from 'vitest';
import { pooledCryptoRng, type Rng } from '../../src/deps.ts';
import { checkRules, compileRules, roll, routeKey, ruleFor, servedRouteKey } from '../../src/modules/sandbox/faults.rules.ts';

/** A seeded byte source (xorshift32), counting the bytes it hands out. */
function seeded(seed: number): Rng & { drawn: number } {
  let s = seed >>> 0 || 1;
  const rng = {
    drawn: 0,
    bytes(n: number): Buffer {
      rng.drawn += n;
      const out = Buffer.alloc(n);
      for (let i = 0; i < n; i++) {
        s ^= s << 13;
        s >>>= 0;
        s ^= s >>> 17;
        s ^= s << 5;
        s >>>= 0;
        out[i] = s & 0xff;
      }
      return out;
    },
  };
  return rng;
}

describe('route keys', () => {
  it('name a route whatever its parameters are called, in the document or Fastify spelling', () => {
    expect(routeKey('POST /quotes/{quoteId}/execute')).toBe('POST /quotes/{}/execute');
    expect(routeKey('post /quotes/:id/execute/')).toBe('POST /quotes/{}/execute');
    expect(servedRouteKey('POST', '/2025-10-13/quotes/:quoteId/execute', '/2025-10-13')).toBe('POST /quotes/{}/execute');
    expect(servedRouteKey('GET', '/health', '/2025-10-13')).toBeUndefined();
    expect(routeKey('*')).toBe('*');
    expect(routeKey('/quotes')).toBeUndefined();
    expect(routeKey('POST quotes')).toBeUndefined();
    expect(routeKey('POST /quotes?x=1')).toBeUndefined();
  });
});

describe('checkRules', () => {
  const ctx = { faultableRoutes: new Set(['POST /quotes', 'GET /customers/{}']), nowMs: Date.parse('2030-01-01T00:00:00Z') };
  it('accepts a well-formed set', () => {
    expect(
      checkRules(
        [
          { route: 'POST /quotes', latencyMs: 100, errorRate: 0.5, errorStatus: 500, expiresAt: '2030-01-01T00:00:01Z' },
          { route: 'GET /customers/{customerId}', errorRate: 1 },
          { route: '*', latencyMs: 5 },
          { eventType: 'OUTGOING_PAYMENT.FAILED', dropRate: 1 },
          { eventType: '*', dropRate: 0.1 },
        ],
        ctx,
      ),
    ).toEqual([]);
  });
  it('refuses an expiry that is not after the platform clock, and two rules for one target', () => {
    expect(checkRules([{ route: 'POST /quotes', errorRate: 1, expiresAt: '2030-01-01T00:00:00Z' }], ctx).map((e) => e.field)).toEqual([
      'rules.0.expiresAt',
    ]);
    expect(
      checkRules(
        [
          { eventType: 'TEST', dropRate: 1 },
          { eventType: 'TEST', dropRate: 0.5 },
        ],
        ctx,
      ),
    ).toEqual([{ field: 'rules.1', message: 'targets the same event as rules.0' }]);
  });
});

describe('ruleFor', () => {
  it('prefers the exact rule, falls back to the catch-all, and ignores expired rules', () => {
    const c = compileRules([
      { route: '*', latencyMs: 1 },
      { route: 'POST /quotes', errorRate: 1, expiresAt: '2030-01-01T00:00:00.000Z' },
    ]);
    const before = Date.parse('2029-12-31T23:59:59Z');
    const after = Date.parse('2030-01-01T00:00:00Z');
    expect(ruleFor(c.routes, 'POST /quotes', before)?.errorRate).toBe(1);
    expect(ruleFor(c.routes, 'POST /quotes', after)?.latencyMs).toBe(1);
    expect(ruleFor(c.routes, 'GET /customers', before)?.latencyMs).toBe(1);
    expect(ruleFor(compileRules([]).routes, 'GET /customers', before)).toBeUndefined();
  });
});

describe('roll', () => {
  it('draws nothing for rates 0 and 1, so all-or-nothing rules leave a seeded stream alone', () => {
    const rng = seeded(7);
    expect(roll(rng, 1)).toBe(true);
    expect(roll(rng, 0)).toBe(false);
    expect(roll(rng, undefined)).toBe(false);
    expect(rng.drawn).toBe(0);
  });
  it('is reproducible from a seed and close to its rate', () => {
    const run = (seed: number) => {
      const rng = seeded(seed);
      return Array.from({ length: 2_000 }, () => roll(rng, 0.3));
    };
    expect(run(42)).toEqual(run(42));
    const share = run(42).filter(Boolean).length / 2_000;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.35);
    // The production source works too.
    expect(typeof roll(pooledCryptoRng(), 0.5)).toBe('boolean');
  });
});
