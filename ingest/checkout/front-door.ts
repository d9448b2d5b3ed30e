import { readdirSync, readFileSync } from 'node:fs';
import type { AppRouter } from '../../core/http/state.ts';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import { html, sendPage, wantsHtml } from './html.ts';
import { messages } from './i18n.ts';
import { payerLang } from './lang.ts';

const DOCS_DIR = new URL('../../docs/', import.meta.url);

/** The docs as they ship (docs/*.md), read once: served as plain text, never a path from the request. */
function readDocs(): Map<string, string> {
  const names = readdirSync(DOCS_DIR).filter((name) => /^[a-z0-9-]+\.md$/.test(name));
  return new Map(names.sort().map((name) => [name, readFileSync(new URL(name, DOCS_DIR), 'utf8')]));
}

/**
 * The front door of embedded mode (SEED_DEMO): `GET /` in a browser is a landing page linking the demo
 * shop, the docs and the OpenAPI document; `/docs/` lists docs/*.md, each served as plain text. API clients
 * asking for `/` get the 404 problem they always got. Without demo data there is no front door.
 */
export function mountFrontDoor(router: AppRouter, deps: Deps): void {
  if (!deps.config.seedDemo) return;
  const docs = readDocs();

  router.get('/', (ctx) => {
    if (!wantsHtml(ctx)) throw new DomainError('not-found');
    const m = messages(payerLang(ctx));
    sendPage(ctx, 200, {
      title: m.landingTitle,
      body: html`<h1>${m.landingTitle}</h1>
        <p>${m.landingIntro}</p>
        <ul class="links">
          <li><a href="/demo/shop">${m.landingShop}</a></li>
          <li><a href="/docs/">${m.landingDocs}</a></li>
          <li><a href="/api/openapi.json">${m.landingOpenApi}</a></li>
          <li>${m.landingDashboard}</li>
        </ul>`,
    });
  });

  router.get('/docs/', (ctx) => {
    const m = messages(payerLang(ctx));
    sendPage(ctx, 200, {
      title: m.docsTitle,
      body: html`<h1>${m.docsTitle}</h1>
        <ul class="links">
          ${[...docs.keys()].map((name) => html`<li><a href="/docs/${name}">${name}</a></li>`)}
        </ul>`,
    });
  });

  router.get('/docs/:name', (ctx) => {
    const text = docs.get(ctx.params.name ?? '');
    if (text === undefined) throw new DomainError('not-found');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = text;
  });
}
