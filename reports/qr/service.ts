import { randomBytes } from 'node:crypto';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import { signedPayLinkUrl } from '../../core/payments/pay-link.ts';
import { MAX_QR_CONTENT } from '../../core/qr/limits.ts';
import type { AgencyRow, QrCodeKind, QrCodeRow } from '../../core/store/index.ts';
import type { DuitNowQrResponse, FieldError, QrCodeResponse, QrRequest } from '../../schemas/index.ts';
import { buildDuitNowPayload, DEFAULT_CATEGORY_CODE, type DuitNowInput } from './duitnow.ts';

/** The path of a generated QR code's PNG on {reports_url}; its token is the unguessable part. */
export const PNG_PATH = '/api/qrcode/v1/png';

/**
 * The signed QR code (spec 1, 2.2): a pay link carrying the request's fields and extras, signed with the
 * service's own PAY_LINK_SECRET so the pay page refuses it once changed; stored for its PNG URL.
 */
export async function createPayLinkQr(
  deps: Deps,
  agency: AgencyRow,
  request: QrRequest,
): Promise<QrCodeResponse> {
  const payUrl = signedPayLinkUrl(deps.config.publicUrls.base, deps.config.payLinkSecret, {
    agency: agency.code,
    paymentCategory: request.paymentCategory,
    refNo: request.refNo,
    amount: request.amount,
    extras: request.extras ?? {},
    uses: request.uses ?? 'once',
  });
  if (payUrl.length > MAX_QR_CONTENT) {
    throw new DomainError('validation-failed', 'The QR code request is not valid.', [
      {
        pointer: request.extras ? '/extras' : '/refNo',
        message: `the pay link would be ${payUrl.length} characters; a QR code holds at most ${MAX_QR_CONTENT} here (shorten refNo or extras)`,
      },
    ]);
  }
  const { pngUrl, expiresAt } = await store(deps, agency, 'pay-url', payUrl);
  return { pngUrl, payUrl, expiresAt };
}

/**
 * The DuitNow QR code (spec 1, 2.2): an EMVCo merchant-presented payload with the agency's DuitNow merchant
 * account, the amount and the refNo as bill number. 409 when the agency has no DuitNow settings; 422 when
 * a value would not fit its data object (a request field, or an agency setting: pointer /agency).
 */
export async function createDuitNowQr(
  deps: Deps,
  agency: AgencyRow,
  request: QrRequest,
): Promise<DuitNowQrResponse> {
  if (request.extras !== undefined) {
    throw new DomainError('validation-failed', 'The QR code request is not valid.', [
      { pointer: '/extras', message: 'a DuitNow QR code has no room for extras (use the signed QR code)' },
    ]);
  }
  if (request.uses !== undefined) {
    // DuitNow payments settle at the agency's own acquirer: amil never sees them, so cannot count them.
    throw new DomainError('validation-failed', 'The QR code request is not valid.', [
      { pointer: '/uses', message: 'applies to the signed QR code only (a DuitNow QR is paid at the bank)' },
    ]);
  }
  const { acquirerId, merchantId, name, city, categoryCode } = agency.settings.duitnow;
  const missing = Object.entries({ acquirerId, merchantId, name, city })
    .filter(([, value]) => !value)
    .map(([key]) => key);
  if (!acquirerId || !merchantId || !name || !city) {
    throw new DomainError(
      'duitnow-not-configured',
      `Agency ${agency.code} has no DuitNow ${missing.join(', ')}; ops set them with ` +
        `amil agency set ${agency.code} --duitnow-acquirer .. --duitnow-merchant .. --duitnow-name .. --duitnow-city ..`,
    );
  }
  const input: DuitNowInput = {
    acquirerId,
    merchantId,
    categoryCode: categoryCode ?? DEFAULT_CATEGORY_CODE,
    amount: request.amount,
    name,
    city,
    refNo: request.refNo,
  };
  const built = buildDuitNowPayload(input);
  if ('problems' in built) {
    const errors: FieldError[] = built.problems.map(({ field, message }) =>
      field === 'refNo' || field === 'amount'
        ? { pointer: `/${field}`, message }
        : { pointer: '/agency', message: `the agency's DuitNow ${field} ${message}` },
    );
    throw new DomainError(
      'validation-failed',
      'A value does not fit the DuitNow QR code; nothing is cut.',
      errors,
    );
  }
  const { pngUrl, expiresAt } = await store(deps, agency, 'duitnow', built.payload);
  return { pngUrl, payload: built.payload, expiresAt };
}

/** A generated QR code by the token of its PNG URL: 404 unknown, 410 past its lifetime. */
export async function servedQrCode(deps: Deps, token: string): Promise<QrCodeRow> {
  const row = /^[A-Za-z0-9_-]{22}$/.test(token) ? await deps.store.qrCodes.get(token) : undefined;
  if (!row) throw new DomainError('not-found', 'There is no such QR code.');
  if (deps.clock.now().toISOString() >= row.expiresAt) {
    throw new DomainError(
      'qr-expired',
      `This QR code's image expired at ${row.expiresAt}; generate it again.`,
    );
  }
  return row;
}

async function store(
  deps: Deps,
  agency: AgencyRow,
  kind: QrCodeKind,
  content: string,
): Promise<{ pngUrl: string; expiresAt: string }> {
  const now = deps.clock.now();
  // 128 random bits: the PNG URL is the only credential its image needs.
  const token = randomBytes(16).toString('base64url');
  const expiresAt = new Date(now.getTime() + deps.config.qr.pngTtlDays * 86_400_000).toISOString();
  await deps.store.qrCodes.create({
    token,
    agencyCode: agency.code,
    kind,
    content,
    createdAt: now.toISOString(),
    expiresAt,
  });
  return { pngUrl: `${deps.config.publicUrls.reports}${PNG_PATH}/${token}.png`, expiresAt };
}
