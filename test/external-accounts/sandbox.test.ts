/** Sandbox magic values: beneficiary name verification by the primary identifier's last 3 digits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ibanProblem } from '../../src/modules/external-accounts/checksums.ts';
import { sandboxSuffix } from '../../src/modules/external-accounts/external-accounts.service.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { clabeEnding, EXAMPLES, expectFieldError, newCustomer, person, usAccount } from './util.ts';

let srv: TestServer;
let p: PlatformHandle;
let customerId: string;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  customerId = await newCustomer(p.api);
});
afterAll(async () => srv.close());

const create = (body: Record<string, unknown>) => p.api.post('/customers/external-accounts', { customerId, ...body });

/** A mod-97-valid German IBAN whose last 3 digits are `suffix`. */
function ibanEnding(suffix: string): string {
  const bban = `37040044053201${'3'}${suffix.padStart(3, '0')}`.padStart(18, '0');
  for (let cd = 2; cd <= 98; cd++) {
    const iban = `DE${String(cd).padStart(2, '0')}${bban}`;
    if (!ibanProblem(iban)) return iban;
  }
  throw new Error('no check digits');
}

describe('beneficiary verification suffixes', () => {
  const table: [string, string | null][] = [
    ['102', 'NOT_MATCHED'],
    ['103', 'PARTIAL_MATCH'],
    ['104', 'PENDING'],
    ['106', 'UNSUPPORTED'],
    ['107', 'CHECKED_BY_RECEIVING_FI'],
    ['101', 'MATCHED'],
    ['108', 'MATCHED'],
    ['002', 'MATCHED'],
    ['000', 'MATCHED'],
  ];
  for (const [suffix, status] of table) {
    it(`account number ending ${suffix} → ${status}`, async () => {
      const accountInfo = {
        accountType: 'US_ACCOUNT',
        accountNumber: `4400${suffix}`,
        routingNumber: '021000021',
        beneficiary: person('John Michael Doe'),
      };
      const res = await create({ currency: 'USD', accountInfo });
      expect(res.status, res.text).toBe(201);
      expect(res.body.beneficiaryVerificationStatus).toBe(status);
      const got = await p.api.get(`/customers/external-accounts/${res.body.id}`);
      expect(got.body.beneficiaryVerificationStatus).toBe(status);
      const verified = { MATCHED: 'John Michael Doe', PARTIAL_MATCH: 'J. Doe', NOT_MATCHED: 'Sandbox Account Holder' } as Record<
        string,
        string
      >;
      if (status && verified[status]) expect(res.body.beneficiaryVerifiedData).toEqual({ fullName: verified[status] });
      else expect(res.body.beneficiaryVerifiedData).toBeUndefined();
    });
  }

  it('105 → 400 INVALID_BANK_ACCOUNT naming the identifier, and nothing is stored', async () => {
    const res = expectFieldError(await create(usAccount(undefined, '4400105')), 'accountInfo.accountNumber', 'INVALID_BANK_ACCOUNT');
    expect(res.body.message).toMatch(/invalid account/);
    const list = await p.api.get('/customers/external-accounts', { query: { customerId, limit: 100 } });
    expect(list.body.data.some((a: { accountInfo: { accountNumber?: string } }) => a.accountInfo.accountNumber === '4400105')).toBe(false);
  });

  it('reads the suffix of every kind of primary identifier', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['EUR', { ...EXAMPLES.EUR_ACCOUNT!.accountInfo, iban: ibanEnding('102') }, 'NOT_MATCHED'],
      ['MXN', { ...EXAMPLES.MXN_ACCOUNT!.accountInfo, clabeNumber: clabeEnding('103') }, 'PARTIAL_MATCH'],
      ['GBP', { ...EXAMPLES.GBP_ACCOUNT!.accountInfo, accountNumber: '31926104' }, 'PENDING'],
      // Identifiers with a domain part: the digits at the end of the user part.
      ['BRL', { ...EXAMPLES.BRL_ACCOUNT!.accountInfo, pixKey: 'testuser.106@pix.com.br' }, 'UNSUPPORTED'],
      ['INR', { accountType: 'INR_ACCOUNT', vpa: 'priya107@okhdfc', beneficiary: person() }, 'CHECKED_BY_RECEIVING_FI'],
      ['BRL', { ...EXAMPLES.BRL_ACCOUNT!.accountInfo, pixKey: '+5511987654102', pixKeyType: 'PHONE' }, 'NOT_MATCHED'],
      [
        'BTC',
        { accountType: 'LAYER2_WALLET', address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mr103' },
        'PARTIAL_MATCH',
      ],
      ['BTC', { accountType: 'LIGHTNING', lightningAddress: 'satoshi104@wallet.example.com' }, 'PENDING'],
      ['KES', { ...EXAMPLES.KES_ACCOUNT!.accountInfo, phoneNumber: '+254712345107' }, 'CHECKED_BY_RECEIVING_FI'],
    ];
    for (const [currency, accountInfo, status] of cases) {
      const res = await create({ currency, accountInfo });
      expect(res.status, `${JSON.stringify(accountInfo)}: ${res.text}`).toBe(201);
      expect(res.body.beneficiaryVerificationStatus, JSON.stringify(accountInfo)).toBe(status);
    }
  });

  it('105 applies to every identifier kind', async () => {
    expectFieldError(
      await create({ currency: 'EUR', accountInfo: { ...EXAMPLES.EUR_ACCOUNT!.accountInfo, iban: ibanEnding('105') } }),
      'accountInfo.iban',
      'INVALID_BANK_ACCOUNT',
    );
    expectFieldError(
      await create({ currency: 'MXN', accountInfo: { ...EXAMPLES.MXN_ACCOUNT!.accountInfo, clabeNumber: clabeEnding('105') } }),
      'accountInfo.clabeNumber',
      'INVALID_BANK_ACCOUNT',
    );
    expectFieldError(
      await create({ currency: 'BRL', accountInfo: { ...EXAMPLES.BRL_ACCOUNT!.accountInfo, pixKey: 'maria.105@example.com' } }),
      'accountInfo.pixKey',
      'INVALID_BANK_ACCOUNT',
    );
    expectFieldError(
      await create({ currency: 'INR', accountInfo: { accountType: 'INR_ACCOUNT', vpa: 'ravi105@okaxis', beneficiary: person() } }),
      'accountInfo.vpa',
      'INVALID_BANK_ACCOUNT',
    );
    // (Base58 addresses, Solana and Tron, have no 0 and so cannot end in a 1xx suffix.)
    expectFieldError(
      await create({
        currency: 'USDC',
        accountInfo: { accountType: 'POLYGON_WALLET', address: '0xAbCDEF1234567890aBCdEf1234567890ABcDe105' },
      }),
      'accountInfo.address',
      'INVALID_BANK_ACCOUNT',
    );
  });

  it('validation comes first: a malformed identifier ending 105 is INVALID_INPUT', async () => {
    expectError(
      await create({ currency: 'MXN', accountInfo: { ...EXAMPLES.MXN_ACCOUNT!.accountInfo, clabeNumber: '032180000118359105' } }),
      400,
      'INVALID_INPUT',
    );
  });

  it('production platforms get no verification result and no magic values', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const c = await newCustomer(prod.api);
    for (const n of ['5500102', '5500105']) {
      const res = await prod.api.post('/customers/external-accounts', usAccount(c, n));
      expect(res.status, res.text).toBe(201);
      expect(res.body.beneficiaryVerificationStatus).toBeUndefined();
      expect(res.body.beneficiaryVerifiedData).toBeUndefined();
    }
  });
});

describe('sandboxSuffix', () => {
  it('is the last 3 digits of the identifier, before any @', () => {
    expect(sandboxSuffix({ identifier: '12345678002' })).toBe('002');
    expect(sandboxSuffix({ identifier: 'DE89370400440532013005' })).toBe('005');
    expect(sandboxSuffix({ identifier: 'testuser.002@pix.com.br' })).toBe('002');
    expect(sandboxSuffix({ identifier: 'priya003@okhdfc' })).toBe('003');
    expect(sandboxSuffix({ identifier: '+5511987654004' })).toBe('004');
    expect(sandboxSuffix({ identifier: '0xAbCDEF1234567890aBCdEf1234567890ABcDef12' })).toBe('');
    expect(sandboxSuffix({ identifier: 'user@007.example.com' })).toBe('');
    expect(sandboxSuffix({ identifier: '12' })).toBe('');
  });

  it('is stored with the account for the money-movement modules', async () => {
    const res = await create(usAccount(undefined, '66000005'));
    const row = await srv.app.ctx.db.selectFrom('external_accounts').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(sandboxSuffix(row)).toBe('005');
  });
});
