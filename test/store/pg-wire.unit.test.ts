/**
 * A pipeline's messages as one buffer (src/store/pg-wire.ts): byte for byte what pg's own
 * serializer (pg-protocol, the one `pg` sends with) writes for the same Parse, Bind, Describe and
 * Execute messages — for every kind of parameter pg's `prepareValue` leaves (NULL, text, bytes),
 * short and long, ASCII and not (accents, CJK, emoji, a lone surrogate), empty strings, and
 * pipelines large enough to grow the scratch buffer.
 */
import { serialize } from 'pg-protocol';
import { expect, it } from 'vitest';
import { encodePipeline, type WireStatement } from '../../src/store/pg-wire.ts';

function reference(statements: readonly WireStatement[]): Buffer {
  const parts: Buffer[] = [];
  for (const st of statements) {
    if (st.parse) parts.push(serialize.parse({ name: st.name, text: st.sql, types: [] }));
    parts.push(serialize.bind({ portal: '', statement: st.name, values: [...st.values] }));
    if (st.describe) parts.push(serialize.describe({ type: 'P', name: '' }));
    parts.push(serialize.execute({ portal: '', rows: 0 }));
  }
  return Buffer.concat(parts);
}

/** Equal bytes; on a difference, the first offset that differs (vitest's toEqual walks a buffer slowly). */
function expectSame(actual: Buffer, expected: Buffer, what = ''): void {
  let at = 0;
  while (at < Math.min(actual.length, expected.length) && actual[at] === expected[at]) at++;
  expect({ what, length: actual.length, firstDifference: at === actual.length && at === expected.length ? -1 : at }).toEqual({
    what,
    length: expected.length,
    firstDifference: -1,
  });
}

const st = (values: WireStatement['values'], o: Partial<WireStatement> = {}): WireStatement => ({
  name: 's1',
  sql: 'insert into "t" ("a") values ($1)',
  parse: false,
  describe: false,
  values,
  ...o,
});

const texts = [
  '',
  'a',
  'Transaction:019abcde-0123-7def-8000-0123456789ab',
  'Zoë Ünïcødé',
  '東京都',
  'pay 💸 now',
  `lone \ud800 surrogate`,
  'x'.repeat(47),
  'y'.repeat(48),
  `${'é'.repeat(30)}${'z'.repeat(30)}`,
  JSON.stringify({ id: 'Transaction:1', amount: { value: 12345, currency: 'USD' }, note: 'ünïcødé 🚀' }).repeat(40),
  '12345',
  'true',
];

it('writes each kind of parameter as pg-protocol does', () => {
  for (const t of texts) {
    const statements = [st([t])];
    expectSame(encodePipeline(statements), reference(statements), JSON.stringify(t.slice(0, 40)));
  }
  const mixed = [st([null, 'a', Buffer.from([0, 1, 2, 255]), '', null, '💸', Buffer.alloc(0)])];
  expectSame(encodePipeline(mixed), reference(mixed));
});

it('writes Parse with the statement name and text, and Describe only where asked, in statement order', () => {
  const statements = [
    st([], { name: '', sql: 'BEGIN', parse: true }),
    st(['a', null], { name: 'corridor_7', sql: 'select $1::text, $2::int -- ünï', parse: true, describe: true }),
    st(['b', '2'], { name: 'corridor_7' }),
    st([Buffer.from('bytes')], { name: 'corridor_9', describe: true }),
    st([], { name: '', sql: 'COMMIT', parse: true }),
  ];
  expectSame(encodePipeline(statements), reference(statements));
});

it('grows past its scratch buffer mid-parameter and mid-message, and answers a copy later pipelines do not change', () => {
  const big = Array.from({ length: 400 }, (_, i) => st([`id-${i}`, 'é'.repeat(200 + i), null, String(i)], { describe: i % 7 === 0 }));
  const first = encodePipeline(big);
  expectSame(first, reference(big));
  const snapshot = Buffer.from(first);
  const huge = [st(['w'.repeat(3 << 20)])];
  expectSame(encodePipeline(huge), reference(huge));
  expectSame(encodePipeline([st(['small'])]), reference([st(['small'])]));
  expectSame(first, snapshot);
});

it('writes an empty pipeline as no bytes', () => {
  expect(encodePipeline([]).length).toBe(0);
});
