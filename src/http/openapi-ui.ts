/**
 * /docs: Swagger UI (@fastify/swagger-ui, its assets served from node_modules by Corridor: no CDN,
 * fonts or scripts from elsewhere) dressed as Corridor's API reference — its own title, logo and
 * favicon, no "Explore" box for loading other documents, a link to the sandbox's magic values —
 * showing the very document `/2025-10-13/openapi.json` serves (`/docs/json` answers with it rather
 * than building a second copy from the routes on the first visit).
 */
import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { MAGIC_VALUES_CSP, magicValuesPage } from '../modules/sandbox/magic-values.page.ts';
import { MAGIC_VALUES_PATH } from './openapi-enrich.ts';

export const DOCS_TITLE = 'Corridor API reference';

/** The logo: Corridor's name on a path between two points (inline SVG, no external font). */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40">
<circle cx="10" cy="20" r="6" fill="#62a03f"/><circle cx="46" cy="20" r="6" fill="#62a03f"/>
<path d="M16 20h24" stroke="#62a03f" stroke-width="4" stroke-linecap="round"/>
<text x="60" y="27" font-family="sans-serif" font-size="22" font-weight="700" fill="#ffffff">Corridor</text>
</svg>`;

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="6" fill="#1b1b1b"/><circle cx="8" cy="16" r="4" fill="#62a03f"/>
<circle cx="24" cy="16" r="4" fill="#62a03f"/><path d="M12 16h8" stroke="#62a03f" stroke-width="3"/></svg>`;

/** The "Explore" box loads any URL into the page: not wanted on a local reference for one API. */
const THEME_CSS = `.swagger-ui .topbar .download-url-wrapper { display: none !important; }
.corridor-links { margin-left: auto; display: flex; gap: 1.5em; align-items: center; }
.corridor-links a { flex: none; max-width: none; white-space: nowrap; color: #fff; font-family: sans-serif; font-size: 14px; font-weight: 600; text-decoration: none; }
.corridor-links a:hover { text-decoration: underline; }`;

/** Adds the top bar's links once Swagger UI has drawn it. */
const THEME_JS = `(function () {
  function addLinks() {
    var bar = document.querySelector('.swagger-ui .topbar-wrapper');
    if (!bar) return false;
    if (bar.querySelector('.corridor-links')) return true;
    var nav = document.createElement('nav');
    nav.className = 'corridor-links';
    nav.innerHTML = '<a id="corridor-magic-values" href="${MAGIC_VALUES_PATH}">Sandbox magic values</a>' +
      '<a id="corridor-openapi" href="json" download="corridor-openapi.json">OpenAPI document</a>';
    bar.appendChild(nav);
    return true;
  }
  new MutationObserver(function (_m, observer) { if (addLinks()) observer.disconnect(); })
    .observe(document.documentElement, { childList: true, subtree: true });
})();`;

/**
 * The options of the docs plugin. `openApiJson` returns the served document's text (the build's copy
 * or the one built before listening: src/app.ts), which `/docs/json` answers with.
 */
export function docsUiOptions(openApiJson: () => string): FastifySwaggerUiOptions {
  return {
    routePrefix: '/docs',
    logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/docs', target: '_self' },
    theme: {
      title: DOCS_TITLE,
      css: [{ filename: 'corridor.css', content: THEME_CSS }],
      js: [{ filename: 'corridor.js', content: THEME_JS }],
      favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(FAVICON_SVG) }],
    },
    uiConfig: { docExpansion: 'list', defaultModelsExpandDepth: 0, displayRequestDuration: true, tryItOutEnabled: false },
    uiHooks: {
      onRequest: (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
        if (req.routeOptions.url === '/docs/json') {
          void reply.type('application/json; charset=utf-8').send(openApiJson());
          return;
        }
        done();
      },
    },
  };
}

/** The docs' own pages beside Swagger UI: the sandbox's magic values. */
export async function docsPages(app: FastifyInstance): Promise<void> {
  app.get(MAGIC_VALUES_PATH, { config: { auth: 'none' }, schema: { hide: true } }, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', MAGIC_VALUES_CSP)
      .header('cache-control', 'no-cache')
      .send(magicValuesPage()),
  );
}
