import type { Context } from 'koa';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import type { AppRouter, StateWith } from '../../core/http/state.ts';
import type { AgencyRow } from '../../core/store/index.ts';
import type { QrRequest } from '../../schemas/index.ts';
import { requireSignedForm } from '../auth.ts';
import { qrSize, sendQrPng } from '../../core/qr/http.ts';
import { requireAcquirer } from '../../core/acquirer/index.ts';
import { parseQrRequest } from './request.ts';
import { createDuitNowQr, createPayLinkQr, PNG_PATH, servedQrCode } from './service.ts';

/**
 * The QR generators on {reports_url} (spec 4.2): signed form in (5.3 POST rule), 201 JSON with the PNG URL
 * out; and the PNG URLs themselves, which need no credentials but their unguessable token (docs/qr.md).
 */
export function mountQrCodes(router: AppRouter, deps: Deps): void {
  router.post<StateWith<'form'>>('/api/qrcode/v1/generator', requireSignedForm(deps), async (ctx) => {
    // A signed QR code holds a pay link: without an acquirer it would lead payers nowhere.
    requireAcquirer(deps.acquirer);
    const { agency, request } = await qrRequest(ctx.state.form, deps);
    created(ctx, await createPayLinkQr(deps, agency, request));
  });

  router.post<StateWith<'form'>>('/api/duitnowqr/v1/generator', requireSignedForm(deps), async (ctx) => {
    const { agency, request } = await qrRequest(ctx.state.form, deps);
    created(ctx, await createDuitNowQr(deps, agency, request));
  });

  router.get(`${PNG_PATH}/:token.png`, async (ctx) => {
    const size = qrSize(ctx);
    const code = await servedQrCode(deps, ctx.params.token ?? '');
    // The image never changes; caches may keep it as long as it is served, never longer.
    const remaining = Math.floor((Date.parse(code.expiresAt) - deps.clock.now().getTime()) / 1000);
    await sendQrPng(ctx, deps.qr, code.content, size, `public, max-age=${Math.max(0, remaining)}, immutable`);
  });
}

/** The validated request and its agency; the category must be one of the agency's (422). */
async function qrRequest(
  entries: StateWith<'form'>['form'],
  deps: Deps,
): Promise<{ agency: AgencyRow; request: QrRequest }> {
  const { request } = parseQrRequest(entries, deps.validators, deps.config.checkout.maxAmountSen);
  const agency = await deps.store.agencies.get(request.agency);
  if (!agency) throw new DomainError('signature-mismatch');
  if (!agency.settings.paymentCategories.includes(request.paymentCategory)) {
    throw new DomainError('validation-failed', 'The QR code request is not valid.', [
      {
        pointer: '/paymentCategory',
        message: `is not a payment category of ${agency.code} (${agency.settings.paymentCategories.join(', ')})`,
      },
    ]);
  }
  return { agency, request };
}

function created(ctx: Context, body: { pngUrl: string }): void {
  ctx.status = 201;
  ctx.set('Location', body.pngUrl);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = body;
}
