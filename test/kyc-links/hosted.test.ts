/**
 * The hosted verification page over plain HTTP (GET the page, POST its form, as a browser without
 * scripts does): what it shows and how safely, each mode (the sandbox tester's pick, a business's
 * magic registration number, an already decided customer, a PRODUCTION platform), the status
 * change and its signed webhooks, the redirect, single use, expiry on the platform clock, a deleted
 * or reset customer, concurrent submissions, and bad form input — each answered with a page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { businessBody, createCustomer, individualBody } from '../helpers/kyc.ts';
import { advance } from '../helpers/payments.ts';
import type { Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { endpointFor, eventTypes, newLink, openPage, signingKey, statusOf, submitPage, textById, tokenOf, webhook } from './helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let hooks: Receiver;
const receivers: Receiver[] = [];

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Acme Payouts' });
  hooks = await endpointFor(p, receivers);
});
afterAll(async () => {
  await srv.close();
  for (const r of receivers) await r.close();
});

const unverified = (fullName = 'Kim Hosted 003') => createCustomer(p.api, individualBody({ fullName, email: 'kim@example.com' }));

describe('the page', () => {
  it('shows the customer, the platform and the sandbox outcomes, as a self-contained page with strict headers', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id);
    const page = await openPage(link.kycUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");

    expect(page.html).toContain('Verify your identity');
    expect(page.html).toContain('Acme Payouts');
    expect(textById(page.html, 'customer-name')).toBe('Kim Hosted 003');
    expect(textById(page.html, 'customer-id')).toBe(c.id);
    expect(textById(page.html, 'customer-status')).toBe('UNVERIFIED');
    expect(page.html).toContain('kim@example.com');
    expect(page.html).toContain(link.expiresAt);
    for (const v of ['APPROVED', 'PENDING', 'REJECTED']) expect(page.html).toContain(`name="outcome" value="${v}"`);
    expect(page.html).toMatch(/<form method="post">/);
    // Self-contained: no script, no external resource, and the write-only identifier never shown.
    expect(page.html).not.toMatch(/<script|src=|href=|@import|url\(/i);
    expect(page.html).not.toContain('123-45-6789');
    // Opening it again (a reload, a link preview) does not use it.
    expect((await openPage(link.kycUrl)).status).toBe(200);
    expect((await p.api.get(`/customers/${c.id}`)).body.kycStatus).toBe('UNVERIFIED');
  });

  it('escapes everything it shows', async () => {
    const evil = await srv.newPlatform({ name: '<img src=x onerror=alert(1)> & "Co"' });
    const c = await createCustomer(evil.api, individualBody({ fullName: '<script>alert("x")</script> 003', email: "o'brien@example.com" }));
    const page = await openPage((await newLink(evil.api, c.id)).kycUrl);
    expect(page.status).toBe(200);
    expect(page.html).not.toContain('<script>');
    expect(page.html).not.toContain('<img');
    expect(page.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; 003');
    expect(page.html).toContain('&lt;img src=x onerror=alert(1)&gt; &amp; &quot;Co&quot;');
    expect(page.html).toContain('o&#39;brien@example.com');
  });

  it('answers HEAD like GET, and other methods with 405 naming GET, HEAD and POST', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id);
    const head = await fetch(link.kycUrl, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await openPage(link.kycUrl, { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    }
  });

  it('is a 404 page for a token that names no link, whatever its shape', async () => {
    const bad = ['A'.repeat(43), 'short', 'A'.repeat(44), '%3Cscript%3E', 'a.b'];
    for (const t of bad) {
      const get = await openPage(`${srv.baseUrl}/hosted/kyc/${t}`);
      expect(get.status, t).toBe(404);
      expect(get.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(get.html).toContain('Link not found');
      expect(get.html).not.toContain('<script>');
      const post = await submitPage(`${srv.baseUrl}/hosted/kyc/${t}`, { outcome: 'APPROVED' });
      expect(post.status, t).toBe(404);
    }
  });
});

describe('submitting (sandbox: the tester picks)', () => {
  it('APPROVED: the customer is approved, with VERIFICATION.APPROVED and CUSTOMER.KYC_APPROVED signed webhooks', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id);
    const done = await submitPage(link.kycUrl, { outcome: 'APPROVED' });
    expect(done.status, done.html).toBe(200);
    expect(done.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(done.html).toContain('Verification submitted');
    expect(textById(done.html, 'customer-status')).toBe('APPROVED');
    expect(textById(done.html, 'verification-status')).toBe('APPROVED');

    expect(await statusOf(p.api, c.id)).toBe('APPROVED');
    const verifications = (await p.api.get('/verifications', { query: { customerId: c.id } })).body.data;
    expect(verifications).toEqual([expect.objectContaining({ customerId: c.id, verificationStatus: 'APPROVED', errors: [] })]);
    expect(await eventTypes(srv, p.id, c.id)).toEqual(['VERIFICATION.APPROVED', 'CUSTOMER.KYC_APPROVED']);

    const key = await signingKey(p);
    const approved = await webhook(hooks, 'CUSTOMER.KYC_APPROVED', c.id);
    expect(verifyWebhook(approved.raw, approved.headers['x-grid-signature'] as string, key)).toBe(true);
    expect(approved.body.data).toMatchObject({ id: c.id, customerType: 'INDIVIDUAL', kycStatus: 'APPROVED' });
    const verified = await webhook(hooks, 'VERIFICATION.APPROVED', c.id);
    expect(verifyWebhook(verified.raw, verified.headers['x-grid-signature'] as string, key)).toBe(true);
    expect(verified.body.data).toMatchObject({ id: verifications[0].id, customerId: c.id });
  });

  it('REJECTED: the customer is rejected (CUSTOMER.KYC_REJECTED)', async () => {
    const c = await unverified();
    const done = await submitPage((await newLink(p.api, c.id)).kycUrl, { outcome: 'REJECTED' });
    expect(done.status, done.html).toBe(200);
    expect(await statusOf(p.api, c.id)).toBe('REJECTED');
    expect(await eventTypes(srv, p.id, c.id)).toEqual(['VERIFICATION.REJECTED', 'CUSTOMER.KYC_REJECTED']);
    await webhook(hooks, 'CUSTOMER.KYC_REJECTED', c.id);
  });

  it('PENDING goes to manual review; a new link then decides it', async () => {
    const c = await unverified();
    const first = await submitPage((await newLink(p.api, c.id)).kycUrl, { outcome: 'PENDING' });
    expect(first.status, first.html).toBe(200);
    expect(textById(first.html, 'verification-status')).toBe('PENDING_MANUAL_REVIEW');
    expect(await statusOf(p.api, c.id)).toBe('PENDING');
    const second = await newLink(p.api, c.id);
    expect(textById((await openPage(second.kycUrl)).html, 'customer-status')).toBe('PENDING');
    expect((await submitPage(second.kycUrl, { outcome: 'APPROVED' })).status).toBe(200);
    expect(await statusOf(p.api, c.id)).toBe('APPROVED');
    expect(await eventTypes(srv, p.id, c.id)).toEqual([
      'VERIFICATION.PENDING_MANUAL_REVIEW',
      'CUSTOMER.KYC_PENDING',
      'VERIFICATION.APPROVED',
      'CUSTOMER.KYC_APPROVED',
    ]);
  });

  it('a business without a magic registration number: the tester picks (CUSTOMER.KYB_*)', async () => {
    const b = await createCustomer(p.api, businessBody({ registrationNumber: 'REG-77-TX' }));
    const link = await newLink(p.api, b.id);
    const page = await openPage(link.kycUrl);
    expect(page.html).toContain('Verify your business');
    expect(textById(page.html, 'customer-name')).toBe('Acme Corporation');
    expect(page.html).toContain('REG-77-TX');
    expect(page.html).toContain('name="outcome" value="REJECTED"');
    expect((await submitPage(link.kycUrl, { outcome: 'REJECTED' })).status).toBe(200);
    expect(await statusOf(p.api, b.id)).toBe('REJECTED');
    expect(await eventTypes(srv, p.id, b.id)).toEqual(['VERIFICATION.REJECTED', 'CUSTOMER.KYB_REJECTED']);
    await webhook(hooks, 'CUSTOMER.KYB_REJECTED', b.id);
  });

  it('refuses a missing, unknown or repeated outcome and unknown fields with a 400 page, leaving the link usable', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id);
    const cases: [Record<string, string> | string, string][] = [
      [{}, 'pick an outcome'],
      [{ outcome: 'HOLD' }, 'must be APPROVED, PENDING or REJECTED'],
      [{ outcome: 'approved' }, 'must be APPROVED, PENDING or REJECTED'],
      [{ outcome: 'APPROVED', note: 'x' }, 'note: is not a field of this form'],
      ['outcome=APPROVED&outcome=REJECTED', 'outcome: was sent more than once'],
    ];
    for (const [fields, message] of cases) {
      const res = await submitPage(link.kycUrl, fields);
      expect(res.status, JSON.stringify(fields)).toBe(400);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(textById(res.html, 'error-message'), JSON.stringify(fields)).toContain(message);
    }
    const json = await submitPage(link.kycUrl, JSON.stringify({ outcome: 'APPROVED' }), 'application/json');
    expect(json.status).toBe(400);
    expect(textById(json.html, 'error-message')).toContain('application/x-www-form-urlencoded');
    const big = await submitPage(link.kycUrl, `outcome=APPROVED&${'x'.repeat(2000)}`);
    expect(big.status).toBe(400);
    expect(big.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await statusOf(p.api, c.id)).toBe('UNVERIFIED');
    expect(await eventTypes(srv, p.id, c.id)).toEqual([]);
    expect((await submitPage(link.kycUrl, { outcome: 'APPROVED' })).status).toBe(200);
  });
});

describe('submitting (outcomes decided without a pick)', () => {
  it.each([
    ['5523002', 'REJECTED', ['VERIFICATION.REJECTED', 'CUSTOMER.KYB_REJECTED']],
    ['5523001', 'PENDING', ['VERIFICATION.PENDING_MANUAL_REVIEW', 'CUSTOMER.KYB_PENDING']],
    ['5523041', 'APPROVED', ['VERIFICATION.APPROVED', 'CUSTOMER.KYB_APPROVED']],
    ['5523003', 'APPROVED', ['VERIFICATION.APPROVED', 'CUSTOMER.KYB_APPROVED']],
  ])('a business whose registrationNumber is %s: the spec table decides %s, as on POST /verifications', async (reg, status, events) => {
    // Only the create-time basics: the magic value decides alone (no owners, no documents).
    const b = await createCustomer(p.api, {
      customerType: 'BUSINESS',
      businessInfo: {
        legalName: `Magic ${reg} Ltd`,
        country: 'US',
        incorporatedOn: '2020-01-01',
        taxId: '12-3456789',
        registrationNumber: reg,
      },
    });
    const link = await newLink(p.api, b.id);
    const page = await openPage(link.kycUrl);
    expect(page.html).not.toContain('name="outcome"');
    expect(page.html).toContain(
      `This one ends in <strong>${reg.slice(-3)}</strong>: submitting sets kybStatus to <strong>${status}</strong>.`,
    );
    // The form offers no pick, so one sent anyway is refused.
    expect((await submitPage(link.kycUrl, { outcome: 'APPROVED' })).status).toBe(400);
    expect((await submitPage(link.kycUrl)).status).toBe(200);
    expect(await statusOf(p.api, b.id)).toBe(status);
    expect(await eventTypes(srv, p.id, b.id)).toEqual(events);
  });

  it('an already decided customer: the page says so, and submitting uses the link and changes nothing', async () => {
    const c = await createCustomer(p.api, individualBody({ fullName: 'Decided Already' }));
    expect(c.kycStatus).toBe('APPROVED');
    const events = await eventTypes(srv, p.id, c.id);
    const link = await newLink(p.api, c.id);
    const page = await openPage(link.kycUrl);
    expect(page.html).toContain('Verification is already complete');
    expect(page.html).not.toContain('name="outcome"');
    const done = await submitPage(link.kycUrl);
    expect(done.status, done.html).toBe(200);
    expect(done.html).toContain('Verification complete');
    expect(await statusOf(p.api, c.id)).toBe('APPROVED');
    expect(await eventTypes(srv, p.id, c.id)).toEqual(events);
    expect((await p.api.get('/verifications', { query: { customerId: c.id } })).body.data).toEqual([]);
    expect((await openPage(link.kycUrl)).status).toBe(410);
  });

  it('a PRODUCTION platform: no outcome to pick; the details on file go to review as POST /verifications sends them', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION', name: 'Prod Co' });
    const c = await createCustomer(prod.api, individualBody({ fullName: 'Pat Prod' }));
    expect(c.kycStatus).toBe('UNVERIFIED');
    const link = await newLink(prod.api, c.id);
    const page = await openPage(link.kycUrl);
    expect(page.html).not.toContain('Sandbox');
    expect(page.html).not.toContain('name="outcome"');
    expect(page.html).toContain('Submitting sends the details Prod Co holds');
    expect((await submitPage(link.kycUrl, { outcome: 'APPROVED' })).status).toBe(400);
    const done = await submitPage(link.kycUrl);
    expect(done.status, done.html).toBe(200);
    expect(done.html).toContain('Prod Co will let you know the outcome');
    // No identity document was uploaded: the review lists what is missing, and the status stays.
    const v = (await prod.api.get('/verifications', { query: { customerId: c.id } })).body.data;
    expect(v).toEqual([expect.objectContaining({ verificationStatus: 'RESOLVE_ERRORS' })]);
    expect(await statusOf(prod.api, c.id)).toBe('UNVERIFIED');
  });
});

describe('the redirect', () => {
  it('sends the browser to redirectUri with a 303 once the form is submitted, and allows that origin as a form target', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id, { redirectUri: 'https://app.example.com/onboarding/done?x=1&y=2' });
    const page = await openPage(link.kycUrl);
    expect(page.headers.get('content-security-policy')).toContain("form-action 'self' https://app.example.com");
    const done = await submitPage(link.kycUrl, { outcome: 'APPROVED' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('https://app.example.com/onboarding/done?x=1&y=2');
    expect(done.html).toContain('href="https://app.example.com/onboarding/done?x=1&amp;y=2"');
    expect(await statusOf(p.api, c.id)).toBe('APPROVED');
  });

  it('is not taken for a submission that fails', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id, { redirectUri: 'https://app.example.com/done' });
    const bad = await submitPage(link.kycUrl, { outcome: 'MAYBE' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('location')).toBeNull();
  });
});

describe('single use and expiry', () => {
  it('works once: afterwards GET and POST answer a 410 page, and other links of the customer still work', async () => {
    const c = await unverified();
    const a = await newLink(p.api, c.id);
    const b = await newLink(p.api, c.id);
    expect((await submitPage(a.kycUrl, { outcome: 'PENDING' })).status).toBe(200);
    const rows = await srv.app.ctx.db.selectFrom('kyc_links').select(['used_at', 'outcome']).where('customer_id', '=', c.id).execute();
    expect(rows).toEqual(
      expect.arrayContaining([
        { used_at: expect.any(String), outcome: 'PENDING_MANUAL_REVIEW' },
        { used_at: null, outcome: null },
      ]),
    );
    for (const res of [await openPage(a.kycUrl), await submitPage(a.kycUrl, { outcome: 'APPROVED' })]) {
      expect(res.status).toBe(410);
      expect(res.html).toContain('Link already used');
    }
    expect(await statusOf(p.api, c.id)).toBe('PENDING');
    expect((await submitPage(b.kycUrl, { outcome: 'APPROVED' })).status).toBe(200);
    expect(await statusOf(p.api, c.id)).toBe('APPROVED');
  });

  it('two submissions at once: one verifies, the other finds the link used', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id);
    const results = await Promise.all([submitPage(link.kycUrl, { outcome: 'APPROVED' }), submitPage(link.kycUrl, { outcome: 'REJECTED' })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 410]);
    const winner = results.find((r) => r.status === 200)!;
    expect(await statusOf(p.api, c.id)).toBe(textById(winner.html, 'customer-status'));
    expect((await p.api.get('/verifications', { query: { customerId: c.id } })).body.data).toHaveLength(1);
  });

  it('expires after 24 hours on the platform clock', async () => {
    const q = await srv.newPlatform();
    const c = await createCustomer(q.api, individualBody({ fullName: 'Clock Watcher 003' }));
    const early = await newLink(q.api, c.id);
    await advance(q, 24 * 3600 - 60);
    expect((await openPage(early.kycUrl)).status).toBe(200);
    const later = await newLink(q.api, c.id);
    await advance(q, 61);
    for (const res of [await openPage(early.kycUrl), await submitPage(early.kycUrl, { outcome: 'APPROVED' })]) {
      expect(res.status).toBe(410);
      expect(res.html).toContain('Link expired');
    }
    expect(await statusOf(q.api, c.id)).toBe('UNVERIFIED');
    expect((await submitPage(later.kycUrl, { outcome: 'APPROVED' })).status).toBe(200);
  });
});

describe('the customer goes away', () => {
  it('deleted: the page is a 410 and submitting changes nothing', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id);
    expect((await p.api.delete(`/customers/${c.id}`)).status).toBe(200);
    for (const res of [await openPage(link.kycUrl), await submitPage(link.kycUrl, { outcome: 'APPROVED' })]) {
      expect(res.status).toBe(410);
      expect(res.html).toContain('no longer exists');
    }
    expect((await p.api.get(`/customers/${c.id}`)).body.kycStatus).toBe('UNVERIFIED');
  });

  it('a sandbox reset: the link names no customer any more (404)', async () => {
    const q = await srv.newPlatform();
    const c = await createCustomer(q.api, individualBody({ fullName: 'Reset Me 003' }));
    const link = await newLink(q.api, c.id);
    expect((await q.api.post('/sandbox/reset')).status).toBe(204);
    expect((await openPage(link.kycUrl)).status).toBe(404);
    expect((await submitPage(link.kycUrl, { outcome: 'APPROVED' })).status).toBe(404);
  });

  it("a link is its own platform's: the token is all it takes, and it reaches only its customer", async () => {
    const q = await srv.newPlatform();
    const mine = await createCustomer(q.api, individualBody({ fullName: 'Mine 003' }));
    const theirs = await unverified('Theirs 003');
    const link = await newLink(q.api, mine.id);
    expect(tokenOf(link.kycUrl)).toHaveLength(43);
    expect((await submitPage(link.kycUrl, { outcome: 'REJECTED' })).status).toBe(200);
    expect(await statusOf(q.api, mine.id)).toBe('REJECTED');
    expect(await statusOf(p.api, theirs.id)).toBe('UNVERIFIED');
  });
});

describe('the request log', () => {
  it('shows the route pattern, never the token', async () => {
    const c = await unverified();
    const link = await newLink(p.api, c.id);
    const token = tokenOf(link.kycUrl);
    // Record what the per-request loggers write (app.ts builds them from the root logger's child).
    const lines: unknown[] = [];
    const root = srv.app.log as unknown as { level: string; child: (...a: unknown[]) => unknown };
    const { level, child } = root;
    const record = (...args: unknown[]) => {
      lines.push(args);
    };
    root.child = () => ({ info: record, warn: record, error: record, debug: record, trace: record, fatal: record, level: 'info' });
    root.level = 'info';
    try {
      await openPage(link.kycUrl);
      await submitPage(link.kycUrl, { outcome: 'NOPE' });
      await openPage(link.kycUrl, { method: 'PUT' });
      await submitPage(link.kycUrl, { outcome: 'APPROVED' });
    } finally {
      root.level = level;
      root.child = child;
    }
    const text = JSON.stringify(lines);
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(text).toContain('/2025-10-13/hosted/kyc/:token');
    expect(text).not.toContain(token);
  });
});
