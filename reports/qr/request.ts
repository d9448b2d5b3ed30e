import { DomainError } from '../../core/errors.ts';
import { isReservedKey } from '../../core/http/form.ts';
import { formatSen, ringgitStringToSen } from '../../core/money.ts';
import type { FieldError, QrRequest, Validators } from '../../schemas/index.ts';

/** One form field per extra: `extras[<key>]=<value>` (docs/qr.md). */
const EXTRA_FIELD = /^extras\[(.*)\]$/s;

/**
 * The fields of a QR generator form (spec 2.2) as a QrRequest: `extras[<key>]` fields gathered into
 * `extras`, then the schema (schemas/qr-request.json) and the amount's range. Every problem is reported at
 * once (422 with pointers). Repeated fields never get here: the signature check refuses them.
 */
export function parseQrRequest(
  entries: readonly (readonly [string, string])[],
  validators: Validators,
  maxAmountSen: number,
): { request: QrRequest; amountSen: number } {
  // No prototype: a key is only ever data. Reserved names are refused all the same (never dropped).
  const fields: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const extras: Record<string, string> = Object.create(null) as Record<string, string>;
  const reserved: FieldError[] = [];
  for (const [name, value] of entries) {
    const key = EXTRA_FIELD.exec(name)?.[1];
    if (isReservedKey(key ?? name)) {
      reserved.push({
        pointer: key === undefined ? `/${name}` : `/extras/${key}`,
        message: 'is a reserved name',
      });
    } else if (key === undefined) fields[name] = value;
    else extras[key] = value;
  }
  if (reserved.length > 0)
    throw new DomainError('validation-failed', 'The QR code request is not valid.', reserved);
  if (Object.keys(extras).length > 0) {
    if (fields.extras !== undefined) {
      throw new DomainError('validation-failed', 'The QR code request is not valid.', [
        { pointer: '/extras', message: 'send extras as extras[<key>]=<value> fields only' },
      ]);
    }
    fields.extras = extras;
  }
  const errors: FieldError[] = validators.qrRequest(fields) ? [] : validators.qrRequest.errors();
  const amountSen = ringgitStringToSen(typeof fields.amount === 'string' ? fields.amount : '');
  if (amountSen !== undefined && !errors.some((e) => e.pointer === '/amount')) {
    if (amountSen < 100) errors.push({ pointer: '/amount', message: 'must be at least 1.00' });
    if (amountSen > maxAmountSen) {
      errors.push({ pointer: '/amount', message: `must be at most ${formatSen(maxAmountSen)}` });
    }
  }
  if (errors.length > 0 || amountSen === undefined) {
    throw new DomainError('validation-failed', 'The QR code request is not valid.', errors);
  }
  return { request: fields as unknown as QrRequest, amountSen };
}
