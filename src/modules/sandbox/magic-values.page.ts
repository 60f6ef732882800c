/**
 * The page of the sandbox's magic values, linked from /docs and from the OpenAPI document's
 * description: self-contained HTML (src/http/hosted-page.ts: one inline style sheet allowed by its
 * hash, no scripts or requests), rendered once from the tables of magic-values.ts.
 */
import { hostedPage, html, styleSource } from '../../http/hosted-page.ts';
import { type MagicTable, magicValueTables } from './magic-values.ts';

const STYLE = `
body{margin:0;background:#f4f5f7;color:#1d2330;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:60rem;margin:2rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{font-size:1.5rem;margin:0 0 .5rem}h2{font-size:1.15rem;margin:2rem 0 .25rem}
.field{color:#5b6475;margin:0 0 .5rem}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #e3e6ec;vertical-align:top}
th{font-size:.85rem;color:#5b6475}code{font:14px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f0f2f5;padding:.05rem .3rem;border-radius:4px}
nav a{margin-right:1.25rem}
`;

/** The page's Content-Security-Policy: nothing loads but its own style sheet; it cannot be framed. */
export const MAGIC_VALUES_CSP = ["default-src 'none'", `style-src ${styleSource(STYLE)}`, "frame-ancestors 'none'", "base-uri 'none'"].join(
  '; ',
);

function table(t: MagicTable) {
  return html`<section id="${t.id}">
<h2>${t.title}</h2>
<p class="field">Selected by: ${t.field}</p>
<table>
<thead><tr><th>Value</th><th>Outcome</th></tr></thead>
<tbody>
${t.rows.map((r) => html`<tr><td><code class="magic-value">${r.value}</code></td><td>${r.outcome}</td></tr>\n`)}
${t.otherwise !== undefined ? html`<tr><td>any other</td><td>${t.otherwise}</td></tr>` : ''}
</tbody>
</table>
</section>
`;
}

let page: string | undefined;

/** The whole page (rendered on the first request for it). */
export function magicValuesPage(): string {
  page ??= hostedPage(
    'Corridor sandbox magic values',
    STYLE,
    html`<nav><a href="/docs">API reference</a></nav>
<h1>Sandbox magic values</h1>
<p>On a SANDBOX platform these values steer outcomes, so an integration can reach every path — a failed payment, a
rejected KYC, a declined card — on purpose. Delays follow the platform's clock (<code>POST /sandbox/clock/advance</code>).
The tables are generated from the code that applies them.</p>
${magicValueTables().map(table)}`,
  );
  return page;
}
