/**
 * Canonical JSON (src/lib/canonical-json.ts), the text the signed-retry and Idempotency-Key hashes
 * are taken over: one form per value whatever the key order, valid JSON that reads back as the
 * value (undefined members dropped), no whitespace, keys in code-unit order at every depth, and two
 * different values never share a form. Properties over random JSON; fast-check prints the seed of a
 * failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/lib/canonical-json.ts';

/**
 * JSON values as a client may send them: any key (unicode, empty, `__proto__`-free), any depth, as
 * they read back from JSON text (fast-check's doubles include -0, which JSON writes as 0).
 */
const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** The same value with every object's keys in another order (a different serialisation of one body). */
function reorder(v: unknown, pick: (n: number) => number): unknown {
  if (Array.isArray(v)) return v.map((x) => reorder(x, pick));
  if (v === null || typeof v !== 'object') return v;
  const entries = Object.entries(v);
  const out: [string, unknown][] = [];
  while (entries.length > 0) {
    const [e] = entries.splice(pick(entries.length), 1);
    out.push([e![0], reorder(e![1], pick)]);
  }
  return Object.fromEntries(out);
}

describe('canonicalJson', () => {
  it('is valid, compact JSON that reads back as the value', () => {
    fc.assert(
      fc.property(json, (v) => {
        const text = canonicalJson(v);
        expect(JSON.parse(text)).toEqual(v);
        // The same members as JSON.stringify writes, only reordered: so no byte more.
        expect(text.length).toBe(JSON.stringify(v).length);
      }),
    );
  });

  it('does not depend on key order, at any depth', () => {
    fc.assert(
      fc.property(json, fc.infiniteStream(fc.nat()), (v, picks) => {
        const it = picks[Symbol.iterator]();
        const shuffled = reorder(v, (n) => it.next().value % n);
        expect(canonicalJson(shuffled)).toBe(canonicalJson(v));
      }),
    );
  });

  it('is a fixed point: the canonical text of its own reading is itself', () => {
    fc.assert(
      fc.property(json, (v) => {
        const once = canonicalJson(v);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
      }),
    );
  });

  it('tells different values apart (equal forms only for equal values)', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        if (canonicalJson(a) === canonicalJson(b)) expect(a).toEqual(b);
      }),
    );
  });

  it('drops undefined members, as JSON would, and keeps null', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined })), (o) => {
        const kept = Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined));
        expect(canonicalJson(o)).toBe(canonicalJson(kept));
      }),
    );
    expect(canonicalJson({ a: undefined, b: null })).toBe('{"b":null}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('orders keys by UTF-16 code unit (not locale, not integer keys first as objects do), escapes as JSON does', () => {
    expect(canonicalJson({ 2: 'c', 10: 'b', 0: 'a', '': 'e', x: 'd' })).toBe('{"":"e","0":"a","10":"b","2":"c","x":"d"}');
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 0, y: 1 }], c: 2 }, B: 0, é: 4, '': 5 })).toBe(
      '{"":5,"B":0,"a":{"c":2,"d":[3,{"y":1,"z":0}]},"b":1,"é":4}',
    );
    expect(canonicalJson({ '\u{1F600}': 1, '\uFFFF': 2 })).toBe('{"\u{1F600}":1,"\uFFFF":2}');
    expect(canonicalJson({ 'q"uote': 'line\nbreak' })).toBe('{"q\\"uote":"line\\nbreak"}');
  });
});
