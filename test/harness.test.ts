import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

describe('test harness', () => {
  it('creates isolated platforms that can read their own internal account', async () => {
    const p = await srv.newPlatform();
    const res = await p.api.get('/platform/internal-accounts');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});
