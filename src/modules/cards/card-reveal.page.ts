/**
 * The card reveal page as HTML: self-contained (one inline style sheet allowed by its hash; no
 * scripts, images, fonts or other requests), every value HTML-escaped by the `html` tag. It is meant
 * to be shown in an iframe of the platform's app, as the live API's processor page is.
 */
import { type Html, hostedPage, html, styleSource } from '../../http/hosted-page.ts';
import type { Revealed, Unrevealable } from './card-reveal.service.ts';

const STYLE = `
body{margin:0;background:#f4f5f7;color:#1d2330;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:26rem;margin:1.5rem auto;padding:1.5rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{font-size:1.2rem;margin:0 0 .75rem}
.sandbox{display:inline-block;margin-bottom:.75rem;padding:.15rem .6rem;border-radius:999px;background:#fff4d6;color:#7a5200;font-size:.8rem;font-weight:600}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.35rem 1rem;margin:0}
dt{color:#5b6475}dd{margin:0;font-family:ui-monospace,Menlo,Consolas,monospace;letter-spacing:.04em}
.note{color:#5b6475;font-size:.85rem;margin-top:1rem}
`;

const STYLE_SOURCE = styleSource(STYLE);

/** Nothing loads but the page's own style sheet; no form, no base. Framing is allowed: the page is made for an iframe. */
export const REVEAL_CSP = ["default-src 'none'", `style-src ${STYLE_SOURCE}`, "form-action 'none'", "base-uri 'none'"].join('; ');

const layout = (title: string, body: Html): string => hostedPage(title, STYLE, body);

/** 4000 0012 3456 7890 */
const grouped = (pan: string) => pan.replace(/(\d{4})(?=\d)/g, '$1 ');

export function revealedPage(r: Revealed): string {
  const expiry = `${String(r.expMonth).padStart(2, '0')}/${r.expYear}`;
  return layout(
    `${r.brandName} card`,
    html`${r.sandbox ? html`<span class="sandbox">Sandbox</span>` : ''}
<h1 id="brand-name">${r.brandName}</h1>
<dl>
${r.brand !== null ? html`<dt>Network</dt><dd id="network">${r.brand}</dd>` : ''}
<dt>Card number</dt><dd id="pan">${grouped(r.pan)}</dd>
<dt>Expiry</dt><dd id="expiry">${expiry}</dd>
<dt>CVV</dt><dd id="cvv">${r.cvv}</dd>
</dl>
<p class="note">Shown once. Close this view when you are done; ask for a new reveal to see the details again.</p>`,
  );
}

const UNREVEALABLE_TEXT: Record<Unrevealable['kind'], [title: string, text: string]> = {
  missing: ['Link not found', 'This card details link is not valid.'],
  used: ['Link already used', 'Card details are shown once per link. Ask for a new reveal.'],
  expired: ['Link expired', 'This card details link has expired. Ask for a new reveal.'],
  closed: ['Card closed', 'This card is closed; its details are no longer shown.'],
};

export function unrevealablePage(u: Unrevealable): string {
  const [title, text] = UNREVEALABLE_TEXT[u.kind];
  return layout(title, html`<h1>${title}</h1><p>${text}</p>`);
}

export function revealErrorPage(status: number, message: string): string {
  const title = status >= 500 ? 'Something went wrong' : 'Not available';
  return layout(title, html`<h1>${title}</h1><p id="error-message">${message}</p>`);
}
