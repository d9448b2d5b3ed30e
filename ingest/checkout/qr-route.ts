import type { AppRouter } from '../../core/http/state.ts';
import type { Deps } from '../../core/deps.ts';
import { requireAcquirer } from '../../core/acquirer/index.ts';
import { DomainError } from '../../core/errors.ts';
import { parsePayLinkPath } from '../../core/payments/pay-link.ts';
import { qrSize, sendQrPng } from '../../core/qr/http.ts';
import { MAX_QR_CONTENT } from '../../core/qr/limits.ts';
import { checkPayLink } from './pay-links.ts';

/**
 * `GET /qr2/?q=<pay link>` on {base_url} (spec 4.1): the unsigned QR code, a PNG. Only pay links of this
 * service are rendered (origin PUBLIC_BASE_URL, a pay path of an existing agency and category, a valid
 * refNo and amount, a valid signature if signed), so this is no open QR generator for phishing links.
 */
export function mountUnsignedQr(router: AppRouter, deps: Deps): void {
  // The spec writes /qr2/; a link typed or pasted without the slash still finds it, query kept.
  // The router matches /qr2/ here too (trailing slash optional): only the bare path is redirected.
  router.get('/qr2', async (ctx, next) => {
    if (ctx.path !== '/qr2') {
      await next();
      return;
    }
    ctx.status = 301;
    ctx.redirect(`/qr2/${ctx.search}`);
  });
  router.get('/qr2/', async (ctx) => {
    requireAcquirer(deps.acquirer);
    const q = ctx.query.q;
    if (Array.isArray(q)) throw new DomainError('repeated-parameter', 'q appears more than once.');
    if (q === undefined || q === '') refuse('Give q: the pay link to encode, URL-encoded.', 'is required');
    if (q.length > MAX_QR_CONTENT)
      refuse(`q is ${q.length} characters; at most ${MAX_QR_CONTENT}.`, 'is too long');
    const size = qrSize(ctx);
    const base = deps.config.publicUrls.base;
    const payLinkForm = `${base}/pay/{agency}/{paymentCategory}/{refNo}/{amount}`;
    let url: URL;
    try {
      url = new URL(q);
    } catch {
      refuse(`q must be an absolute pay link of this service: ${payLinkForm}.`, 'is not an absolute URL');
    }
    if (url.origin !== base || url.username !== '' || url.password !== '' || url.hash !== '') {
      refuse(
        `Only pay links of this service (${base}) are rendered; this is not an open QR code generator.`,
        `must start with ${base}/pay/`,
      );
    }
    const fields = parsePayLinkPath(url.pathname);
    if (!fields) refuse(`q must be a pay link: ${payLinkForm}.`, 'is not a pay link');
    const checked = await checkPayLink(deps, fields, url.searchParams);
    if (!checked.ok) refuse(`q is not a pay link the pay page would open. ${checked.detail}`, checked.detail);
    // The QR holds the URL as parsed: what was checked is exactly what a phone will open.
    await sendQrPng(ctx, deps.qr, url.href, size, 'public, max-age=86400');
  });
}

function refuse(detail: string, message: string): never {
  throw new DomainError('bad-request', detail, [{ pointer: '/q', message }]);
}
