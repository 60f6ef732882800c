/**
 * Hostile review of CORRIDOR_SEED (issue #25): no secret may be derived from the seed. A card's CVV
 * is sealed at rest like a secret and shown only once on the hosted reveal page; drawn from the
 * seeded stream, anyone who knows (or tries) the small seed could compute every sandbox card's CVV.
 * Two servers with the same seed on fresh stores run the same script: the card numbers match (they
 * are seeded data, like account numbers — which shows the runs really are alike), the CVVs do not.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { dropPgSchemas, resetPgSchema, withSearchPath } from '../../bench/dataset/writers.ts';
import { SEED_EPOCH_MS, seededDeps } from '../../src/lib/seeded-deps.ts';
import { laneStore, startServer, type TestServer } from '../helpers/server.ts';

const SEED = 4242;
const CARDS = 3;
const servers: TestServer[] = [];
const schemas: string[] = [];
const base = process.env.CORRIDOR_TEST_DATABASE_BASE_URL ?? process.env.TEST_DATABASE_URL;

afterAll(async () => {
  for (const s of servers) await s.close();
  if (base) await dropPgSchemas(base, schemas);
});

/** A seeded server on a fresh store (a new DATA_DIR; on PostgreSQL a new, empty schema). */
async function seededServer(): Promise<TestServer> {
  const env: Record<string, string> = { CORRIDOR_SEED: String(SEED) };
  if (laneStore() === 'postgres') {
    if (!base) throw new Error('the postgres lane needs TEST_DATABASE_URL');
    const schema = `seedrev_${process.pid}_${randomBytes(4).toString('hex')}`;
    await resetPgSchema(base, schema);
    schemas.push(schema);
    env.DATABASE_URL = withSearchPath(base, schema);
  }
  const srv = await startServer({ env, deps: seededDeps(SEED, SEED_EPOCH_MS) });
  servers.push(srv);
  return srv;
}

/** The script: a platform, then CARDS cards made real by the trigger, each revealed once. */
async function run(srv: TestServer): Promise<{ platformId: string; cards: { pan: string; cvv: string }[] }> {
  const p = await srv.newPlatform({ name: 'Seeded Cards' });
  const cards: { pan: string; cvv: string }[] = [];
  for (let i = 0; i < CARDS; i++) {
    const t = await p.api.post('/sandbox/trigger', { eventType: 'CARD.STATE_CHANGE' });
    expect(t.status, t.text).toBe(200);
    const revealed = await p.api.post(`/cards/${t.body.created.cardId}/reveal`);
    expect(revealed.status, revealed.text).toBe(200);
    const page = await fetch(revealed.body.panEmbedUrl as string);
    expect(page.status).toBe(200);
    const html = await page.text();
    const pan = /id="pan"[^>]*>([^<]*)</.exec(html)![1]!.replace(/ /g, '');
    const cvv = /id="cvv"[^>]*>([^<]*)</.exec(html)![1]!;
    expect(pan).toMatch(/^\d{16}$/);
    expect(cvv).toMatch(/^\d{3}$/);
    cards.push({ pan, cvv });
  }
  expect((await srv.ledger(p.id)).ok).toBe(true);
  return { platformId: p.id, cards };
}

describe('secrets are never derived from CORRIDOR_SEED', () => {
  it('two runs of one seed issue the same card numbers but unrelated CVVs', async () => {
    const a = await run(await seededServer());
    const b = await run(await seededServer());
    // The runs are alike: the seeded data matches.
    expect(b.platformId).toBe(a.platformId);
    expect(b.cards.map((c) => c.pan)).toEqual(a.cards.map((c) => c.pan));
    // The CVVs are not the seed's: three equal by chance is one in a billion.
    expect(b.cards.map((c) => c.cvv)).not.toEqual(a.cards.map((c) => c.cvv));
  }, 60_000);
});
