import type { Context } from 'koa';
import { html, type SafeHtml } from '../../core/html.ts';
import { LANGS, messages, type Lang } from './i18n.ts';
import { payerLang, switchHref } from './lang.ts';

export { escapeHtml, html, SafeHtml } from '../../core/html.ts';

/** The pages' Content-Security-Policy; `formAction` adds the one foreign origin a form may post to. */
const csp = (formAction: string) =>
  [
    "default-src 'none'",
    "style-src 'self'",
    "script-src 'self'",
    "img-src 'self' data:",
    `form-action 'self'${formAction}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
const CSP = csp('');

/**
 * A whole page: our stylesheet and script only (no CDN), and headers that keep it from being framed,
 * cached or sniffed. `formAction` adds the one foreign origin a page may post to (the merchant's).
 */
export function sendPage(
  ctx: Context,
  status: number,
  page: {
    title: string;
    body: SafeHtml;
    formAction?: string;
    refreshSeconds?: number;
    sandbox?: boolean;
    /** A page in one language only (the demo merchant's): no switch. */
    onlyIn?: Lang;
  },
): void {
  const lang = page.onlyIn ?? payerLang(ctx);
  const m = messages(lang);
  const others = LANGS.filter((l) => l !== lang && !page.onlyIn).flatMap((l) => {
    const href = switchHref(ctx, l);
    return href ? [{ lang: l, href }] : [];
  });
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', page.formAction ? csp(` ${page.formAction}`) : CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Language', lang);
  ctx.body = html`<!doctype html>
    <html lang="${lang}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${page.refreshSeconds ? html`<meta http-equiv="refresh" content="${page.refreshSeconds}" />` : ''}
        <title>${page.title} · amil</title>
        <link rel="stylesheet" href="/assets/checkout.css" />
      </head>
      <body>
        ${page.sandbox ? html`<p class="sandbox-banner" role="note">${m.sandboxBanner}</p>` : ''}
        ${
          others.length > 0
            ? html`<nav class="lang" aria-label="Language / Bahasa">
                ${others.map(
                  (o) =>
                    html`<a href="${o.href}" hreflang="${o.lang}" lang="${o.lang}"
                      >${messages(o.lang).langName}</a
                    >`,
                )}
              </nav>`
            : ''
        }
        <main>${page.body}</main>
        <footer><p>${m.footer}</p></footer>
      </body>
    </html> `.value;
}

/** True when the client prefers an HTML page (a browser) to JSON (an API client; curl's default too). */
export function wantsHtml(ctx: Context): boolean {
  return ctx.accepts('json', 'html') === 'html';
}
