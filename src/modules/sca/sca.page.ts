/**
 * The hosted 2FA-reset liveness page as HTML: self-contained (one inline style sheet allowed by its
 * hash; no scripts, images, fonts or other requests), a plain form POST with a pass and a fail
 * button, every value HTML-escaped (the kyc-links page's `html` tag).
 */
import { type Html, hostedPage, html, styleSource } from '../../http/hosted-page.ts';
import type { PageView } from './sca.resets.service.ts';

const STYLE = `
body{margin:0;background:#f4f5f7;color:#1d2330;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:34rem;margin:2.5rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{font-size:1.4rem;margin:0 0 .5rem}
.sandbox{display:inline-block;margin-bottom:1rem;padding:.15rem .6rem;border-radius:999px;background:#fff4d6;color:#7a5200;font-size:.8rem;font-weight:600}
button{margin:.5rem .5rem 0 0;padding:.6rem 1.2rem;border:0;border-radius:8px;background:#2453d6;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button.fail{background:#b42318}
.note{color:#5b6475;font-size:.9rem}
`;
const STYLE_SOURCE = styleSource(STYLE);

/** Nothing loads but the page's own style sheet; it cannot be framed; its form posts only to itself. */
export const LIVENESS_CSP = [
  "default-src 'none'",
  `style-src ${STYLE_SOURCE}`,
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const layout = (title: string, body: Html): string => hostedPage(title, STYLE, body);

const STATUS_TEXT: Record<string, string> = {
  PENDING_REVIEW: 'The liveness check was submitted and is being reviewed.',
  LIVENESS_PASSED: 'The liveness check passed.',
  REJECTED: 'The liveness check failed. Start a new reset.',
  COMPLETED: 'This reset is complete.',
  EXPIRED: 'This reset window has closed. Start a new reset.',
};

/** The page a token opens (GET), or what a submission led to (POST). */
export function livenessPage(view: PageView): string {
  if (view.kind === 'missing') return layout('Link not found', html`<h1>Link not found</h1><p>This verification link is not valid.</p>`);
  if (view.kind === 'closed') {
    return layout(
      'Identity check',
      html`<h1>Identity check</h1><p id="reset-status" data-status="${view.status}">${STATUS_TEXT[view.status] ?? view.status}</p><p class="note">${view.platformName}. You can close this page.</p>`,
    );
  }
  return layout(
    'Confirm it is you',
    html`${view.sandbox ? html`<span class="sandbox">Sandbox</span>` : ''}
<h1>Confirm it is you</h1>
<p>${view.platformName} needs a liveness check before it resets your ${view.reset.factor} second factor.</p>
${
  view.sandbox
    ? html`<p class="note">Sandbox: choose the outcome of the liveness check. The result is known about 5 seconds after submitting.</p>
<form method="post">
<button type="submit" name="outcome" value="pass">Pass liveness check</button>
<button type="submit" name="outcome" value="fail" class="fail">Fail liveness check</button>
</form>`
    : html`<p id="no-liveness">Corridor has no liveness provider: this check can only be completed on sandbox platforms.</p>`
}
<p class="note">This reset window closes at ${view.reset.expires_at}.</p>`,
  );
}

export function livenessErrorPage(status: number, message: string): string {
  const title = status >= 500 ? 'Something went wrong' : 'The form could not be submitted';
  return layout(title, html`<h1>${title}</h1><p id="error-message">${message}</p>`);
}
