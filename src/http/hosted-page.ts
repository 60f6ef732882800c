/**
 * The shell of Corridor's hosted pages (the KYC link, the 2FA-reset liveness check, the card
 * reveal): self-contained HTML — one inline style sheet allowed by its hash, no scripts, images,
 * fonts or other requests — with every value it shows HTML-escaped by the `html` template tag.
 */
import { createHash } from 'node:crypto';

/** Markup already escaped (or written here): the only thing `html` interpolates as is. */
export class Html {
  constructor(readonly text: string) {}
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text safe in element content and in quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(v: unknown): string {
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === undefined || v === null || v === false) return '';
  return escapeHtml(String(v));
}

/** A template whose interpolations are escaped, unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

/** The Content-Security-Policy source of a page's style sheet (its hash: no 'unsafe-inline'). */
export function styleSource(style: string): string {
  return `'sha256-${createHash('sha256').update(style, 'utf8').digest('base64')}'`;
}

/** A whole page: `body` in the page's `main`, styled by `style` (which its CSP allows by hash). */
export function hostedPage(title: string, style: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${title}</title>
<style>${new Html(style)}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.text;
}
