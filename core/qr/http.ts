import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { DomainError } from '../errors.ts';
import { QR_SIZE, QrTooDenseError } from './limits.ts';
import { QrRendererBusyError, type QrRenderer } from './renderer.ts';

/** The `size` query parameter of a PNG endpoint: pixels, QR_SIZE.min to QR_SIZE.max, default QR_SIZE.default. */
export function qrSize(ctx: Context): number {
  const raw = ctx.query.size;
  if (raw === undefined) return QR_SIZE.default;
  if (Array.isArray(raw)) throw new DomainError('repeated-parameter', 'size appears more than once.');
  const size = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(size >= QR_SIZE.min && size <= QR_SIZE.max)) {
    throw new DomainError(
      'bad-request',
      `size is the image width in pixels, ${QR_SIZE.min} to ${QR_SIZE.max}.`,
      [{ pointer: '/size', message: `must be a whole number from ${QR_SIZE.min} to ${QR_SIZE.max}` }],
    );
  }
  return size;
}

/** Seconds a client is asked to wait when every rendering thread is busy. */
const BUSY_RETRY_AFTER_SECONDS = 2;

/**
 * Answers with the PNG of a QR code of `content`: image/png, the cache policy given, and an ETag from the
 * content and size, so a revalidation is a 304 without rendering. The PNG comes from the renderer's cache
 * or a worker thread, never from the event loop.
 */
export async function sendQrPng(
  ctx: Context,
  renderer: QrRenderer,
  content: string,
  size: number,
  cacheControl: string,
): Promise<void> {
  const etag = createHash('sha256').update(`${size}\n${content}`).digest('base64url').slice(0, 27);
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', `"${etag}"`);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  let png: Buffer;
  try {
    png = await renderer.render(content, size);
  } catch (err) {
    if (err instanceof QrRendererBusyError) {
      throw new DomainError('unavailable', 'Too many QR codes are being drawn; try again shortly.', [], {
        'Retry-After': String(BUSY_RETRY_AFTER_SECONDS),
      });
    }
    if (!(err instanceof QrTooDenseError)) throw err;
    throw new DomainError(
      'bad-request',
      `This QR code needs an image of at least ${err.minimumSize} pixels.`,
      [{ pointer: '/size', message: `must be at least ${err.minimumSize} for this content` }],
    );
  }
  ctx.type = 'image/png';
  ctx.body = png;
}
