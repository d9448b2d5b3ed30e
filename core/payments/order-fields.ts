import { DomainError } from '../errors.ts';
import { formatSen, ringgitStringToSen } from '../money.ts';
import type { CheckoutRequest, FieldError, Validators } from '../../schemas/index.ts';

const MAX_FIELD_BYTES = 255;

/**
 * The field rules of spec 2.1 that need no agency: one value per key, ASCII only and at most 255 bytes
 * (said with the position, rather than left undefined as the spec allows), then the schema
 * (schemas/checkout-request.json), then the amount's range. Every problem is reported at once.
 */
export function parseOrderFields(
  entries: readonly (readonly [string, string])[],
  validators: Validators,
  maxAmountSen: number,
  options: { returnUrlOptional?: boolean } = {},
): { order: CheckoutRequest; amountSen: number } {
  const fields: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (Object.hasOwn(fields, key))
      throw new DomainError('repeated-parameter', `${key} appears more than once.`);
    fields[key] = value;
  }
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(fields)) {
    const problem = asciiProblem(value);
    if (problem) errors.push({ pointer: `/${key}`, message: problem });
  }
  const seen = new Set(errors.map((e) => e.pointer));
  if (!validators.checkoutRequest(fields)) {
    for (const error of validators.checkoutRequest.errors()) {
      // A pay link's order has no returnUrl: the payer ends on our receipt page (docs/checkout.md).
      const optional = options.returnUrlOptional === true && error.pointer === '/returnUrl';
      if (!seen.has(error.pointer) && !(optional && error.message === 'is required')) errors.push(error);
    }
  }
  const amountSen = ringgitStringToSen(fields.amount ?? '');
  if (amountSen !== undefined && !seen.has('/amount')) {
    if (amountSen < 100) errors.push({ pointer: '/amount', message: 'must be at least 1.00' });
    if (amountSen > maxAmountSen) {
      errors.push({ pointer: '/amount', message: `must be at most ${formatSen(maxAmountSen)}` });
    }
  }
  if (errors.length > 0 || amountSen === undefined) {
    throw new DomainError('validation-failed', 'The payment order is not valid.', errors);
  }
  return { order: fields as unknown as CheckoutRequest, amountSen };
}

function asciiProblem(value: string): string | undefined {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) {
      return code > 0x7e
        ? `must be ASCII: a non-ASCII character is at position ${i + 1}`
        : `must not contain control characters (position ${i + 1})`;
    }
  }
  return value.length > MAX_FIELD_BYTES ? `must be at most ${MAX_FIELD_BYTES} bytes` : undefined;
}
