/**
 * The hosted verification page as HTML (the shell and escaping: src/http/hosted-page.ts): a plain
 * form POST, nothing loaded from elsewhere.
 */
import { Html, hostedPage, html, styleSource } from '../../http/hosted-page.ts';
import type { Choice, OpenLink, PageCustomer, PageMode, Submitted, Unusable } from './kyc-links.service.ts';

const STYLE = `
body{margin:0;background:#f4f5f7;color:#1d2330;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:34rem;margin:2.5rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{font-size:1.4rem;margin:0 0 .5rem}
.sandbox{display:inline-block;margin-bottom:1rem;padding:.15rem .6rem;border-radius:999px;background:#fff4d6;color:#7a5200;font-size:.8rem;font-weight:600}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:1.25rem 0}
dt{color:#5b6475}dd{margin:0;overflow-wrap:anywhere}
fieldset{border:1px solid #d9dde5;border-radius:8px;margin:1rem 0;padding:.75rem 1rem}
label{display:block;padding:.35rem 0}label small{display:block;margin-left:1.6rem;color:#5b6475}
button{margin-top:.5rem;padding:.6rem 1.2rem;border:0;border-radius:8px;background:#2453d6;color:#fff;font:inherit;font-weight:600;cursor:pointer}
.note{color:#5b6475;font-size:.9rem}
`;

/** The Content-Security-Policy source of STYLE (its hash: no 'unsafe-inline'). */
const STYLE_SOURCE = styleSource(STYLE);

/**
 * The page's Content-Security-Policy: nothing loads but its own style sheet, it cannot be framed,
 * and its form may post only to itself — and, when the link has a redirectUri, be redirected to that
 * origin (browsers check a form's redirects against form-action too).
 */
export function contentSecurityPolicy(redirectUri?: string): string {
  const formAction = ["'self'"];
  if (redirectUri !== undefined) formAction.push(new URL(redirectUri).origin);
  return [
    "default-src 'none'",
    `style-src ${STYLE_SOURCE}`,
    `form-action ${formAction.join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const layout = (title: string, body: Html): string => hostedPage(title, STYLE, body);

const statusField = (c: PageCustomer) => (c.customerType === 'BUSINESS' ? 'kybStatus' : 'kycStatus');
const sandboxBadge = (sandbox: boolean) => (sandbox ? html`<span class="sandbox">Sandbox</span>` : '');

function details(c: PageCustomer, expiresAt?: string): Html {
  const business = c.customerType === 'BUSINESS';
  return html`<dl>
<dt>${business ? 'Business' : 'Name'}</dt><dd id="customer-name">${c.name ?? '(not on file)'}</dd>
${c.email !== undefined ? html`<dt>Email</dt><dd>${c.email}</dd>` : ''}
${business && c.registrationNumber !== undefined ? html`<dt>Registration number</dt><dd>${c.registrationNumber}</dd>` : ''}
<dt>Customer</dt><dd id="customer-id">${c.id}</dd>
<dt>${statusField(c)}</dt><dd id="customer-status">${c.status}</dd>
${expiresAt !== undefined ? html`<dt>Link expires</dt><dd>${expiresAt}</dd>` : ''}
</dl>`;
}

const CHOICE_TEXT: Record<Choice, [label: string, help: string]> = {
  APPROVED: ['Approve', 'The checks pass.'],
  PENDING: ['Send to manual review', 'The status becomes PENDING; open a new link later to approve or reject.'],
  REJECTED: ['Reject', 'The checks fail.'],
};

function modeSection(mode: PageMode, c: PageCustomer, platformName: string): Html {
  switch (mode.kind) {
    case 'choose':
      return html`<fieldset>
<legend>Sandbox outcome</legend>
${(Object.keys(CHOICE_TEXT) as Choice[]).map(
  (v, i) =>
    html`<label><input type="radio" name="outcome" value="${v}"${i === 0 ? new Html(' checked') : ''}> ${CHOICE_TEXT[v][0]}<small>${CHOICE_TEXT[v][1]}</small></label>`,
)}
</fieldset>`;
    case 'magic':
      return html`<p id="sandbox-rule">In the sandbox a business's registration number decides: one ending in 001 goes to manual review (PENDING), 002 is rejected, any other three digits are approved. This one ends in <strong>${mode.suffix}</strong>: submitting sets ${statusField(c)} to <strong>${mode.status}</strong>.</p>`;
    case 'submit':
      return html`<p>Submitting sends the details ${platformName} holds about ${c.customerType === 'BUSINESS' ? 'the business' : 'you'} for review.</p>`;
    case 'decided':
      return html`<p>Verification is already complete: ${statusField(c)} is <strong>${mode.status}</strong>. Nothing more is needed.</p>`;
  }
}

/** The page a link opens: the customer and the form. */
export function formPage(v: OpenLink): string {
  const business = v.customer.customerType === 'BUSINESS';
  const title = business ? 'Verify your business' : 'Verify your identity';
  return layout(
    title,
    html`${sandboxBadge(v.sandbox)}
<h1>${title}</h1>
<p>${v.platformName} asks ${business ? 'this business' : 'you'} to complete ${business ? 'business (KYB)' : 'identity (KYC)'} verification.</p>
${details(v.customer, v.expiresAt)}
<form method="post">
${modeSection(v.mode, v.customer, v.platformName)}
<button type="submit">${v.mode.kind === 'decided' ? 'Continue' : 'Complete verification'}</button>
</form>
<p class="note">This link works once.</p>`,
  );
}

/** The page after a submission when the link has no redirectUri. */
export function submittedPage(s: Submitted): string {
  const status = s.verification?.verificationStatus;
  return layout(
    'Verification submitted',
    html`${sandboxBadge(s.sandbox)}
<h1>${s.verification ? 'Verification submitted' : 'Verification complete'}</h1>
${s.sandbox ? details(s.customer) : html`<p>Thank you. ${s.platformName} will let you know the outcome.</p>`}
${s.sandbox && status !== undefined ? html`<p>Verification status: <strong id="verification-status">${status}</strong>.</p>` : ''}
<p class="note">You can close this page.</p>`,
  );
}

/** The small body of the 303 to the platform's redirectUri. */
export function redirectPage(redirectUri: string): string {
  return layout('Verification submitted', html`<h1>Verification submitted</h1><p><a href="${redirectUri}">Continue</a></p>`);
}

const UNUSABLE_TEXT: Record<Unusable['kind'], [title: string, text: string]> = {
  missing: ['Link not found', 'This verification link is not valid. Ask for a new one.'],
  used: ['Link already used', 'This verification link was already used. Ask for a new one if you need to verify again.'],
  expired: ['Link expired', 'This verification link has expired. Ask for a new one.'],
  deleted: ['Link no longer available', 'The account this link was made for no longer exists.'],
};

/** The page of a link that cannot be used. */
export function unusablePage(u: Unusable): string {
  const [title, text] = UNUSABLE_TEXT[u.kind];
  return layout(title, html`<h1>${title}</h1><p>${text}</p>${'platformName' in u ? html`<p class="note">${u.platformName}</p>` : ''}`);
}

/** The page of a failed request (bad form input, an internal error). */
export function errorPage(status: number, message: string): string {
  const title = status >= 500 ? 'Something went wrong' : 'The form could not be submitted';
  return layout(title, html`<h1>${title}</h1><p id="error-message">${message}</p>`);
}
