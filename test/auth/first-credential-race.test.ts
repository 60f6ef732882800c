/**
 * Hostile review, defect 7: a wallet's first credential is added without a signature (there is no
 * session to sign with yet); every later one needs a stamp from a session. On PostgreSQL, an
 * EMAIL_OTP and an SMS_OTP add sent at once to a fresh wallet both saw "no credential yet" and both
 * answered 201, so the second credential skipped the signature. The wallet row is now locked as a
 * revocation locks it: exactly one add is direct, the other is a signed-retry challenge (202).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { newWallet, walletSetup } from '../helpers/wallet-auth.ts';

let srv: TestServer;
let p: PlatformHandle;
beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv.close());

describe('adding credentials to a fresh wallet concurrently', () => {
  it('lets exactly one through without a signature, every time', async () => {
    for (let round = 0; round < 8; round++) {
      const { accountId } = await newWallet(p.api);
      const [email, sms] = await Promise.all([
        p.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId }),
        p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId }),
      ]);
      const statuses = [email.status, sms.status].sort();
      expect(statuses, `${email.text}\n${sms.text}`).toEqual([201, 202]);
      const challenge = email.status === 202 ? email : sms;
      expect(challenge.body).toMatchObject({ payloadToSign: expect.any(String), requestId: expect.stringMatching(/^Request:/) });
      const creds = await p.api.get('/auth/credentials', { query: { accountId } });
      expect(creds.body.data).toHaveLength(1);
    }
  });
});
