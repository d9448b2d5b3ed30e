/**
 * The report routes' query strings, checked by their files in schemas/queries/. A query string holds text
 * only: an `integer` property takes a value of decimal digits (a leading minus allowed), anything else stays
 * text and is refused by its type, so `5.0`, `1e2`, `0x10` or ` 5` never pass as a number.
 */
import type { Ajv2020, ErrorObject } from 'ajv/dist/2020.js';
import type { FieldError, JsonSchema } from './validator-types.ts';
import type {
  OrderQuery,
  PayerTransactionsQuery,
  PaymentReportQuery,
  ReconciliationRunsQuery,
  ZakatReportQuery,
} from './types.ts';

/** Each query, by the name routes use, with its type (generated from its file). */
export interface QueryInputs {
  paymentReport: PaymentReportQuery;
  order: OrderQuery;
  payerTransactions: PayerTransactionsQuery;
  zakatReport: ZakatReportQuery;
  reconciliationRuns: ReconciliationRunsQuery;
}

export type QueryName = keyof QueryInputs;

const FILES: Record<QueryName, string> = {
  paymentReport: 'queries/payment-report-query.json',
  order: 'queries/order-query.json',
  payerTransactions: 'queries/payer-transactions-query.json',
  zakatReport: 'queries/zakat-report-query.json',
  reconciliationRuns: 'queries/reconciliation-runs-query.json',
};

/** A query checked: its typed value (defaults filled in), or every problem and the detail to give. */
export type QueryOutcome<T> = { ok: true; value: T } | { ok: false; errors: FieldError[]; detail: string };

export interface QueryValidator<T> {
  /** The keys the file names: only these are read, and each at most once. */
  readonly keys: readonly string[];
  check(query: Readonly<Record<string, string>>): QueryOutcome<T>;
}

export type QueryValidators = { [K in QueryName]: QueryValidator<QueryInputs[K]> };

interface PropertySchema {
  type?: string;
  'x-message'?: string;
  'x-detail'?: string;
}

const DIGITS = /^-?\d{1,15}$/;
const DEFAULT_DETAIL = 'The query is not valid.';

/** Compiles the query validators on their instance (all errors, defaults filled in). */
export function compileQueryValidators(
  ajv: Ajv2020,
  schemas: ReadonlyMap<string, JsonSchema>,
  toFieldErrors: (errors: readonly ErrorObject[]) => FieldError[],
): QueryValidators {
  const compile = <K extends QueryName>(name: K): QueryValidator<QueryInputs[K]> => {
    const schema = schemas.get(FILES[name]);
    const validate = schema && ajv.getSchema(schema.$id);
    if (!schema || !validate) throw new Error(`${FILES[name]} is missing`);
    const properties = (schema.properties ?? {}) as Record<string, PropertySchema>;
    const keys = Object.keys(properties);
    const valid = (value: unknown): value is QueryInputs[K] => validate(value) === true;
    return {
      keys,
      check(query) {
        // No prototype: a key is only ever data.
        const value: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
        for (const key of keys) {
          const text = query[key];
          if (text === undefined) continue;
          value[key] = properties[key]?.type === 'integer' && DIGITS.test(text) ? Number(text) : text;
        }
        if (valid(value)) return { ok: true, value };
        const errors = describeQueryErrors(validate.errors ?? [], properties, toFieldErrors);
        return { ok: false, errors, detail: detailOf(errors, properties, schema) };
      },
    };
  };
  return {
    paymentReport: compile('paymentReport'),
    order: compile('order'),
    payerTransactions: compile('payerTransactions'),
    zakatReport: compile('zakatReport'),
    reconciliationRuns: compile('reconciliationRuns'),
  };
}

/** The property a pointer names (`/items` -> `items`). */
const propertyOf = (pointer: string): string => pointer.split('/')[1] ?? '';

/**
 * A query key's problems in its own words: its `x-message` says what the key takes, whichever keyword
 * failed (type, range, format, enum), so a bad value gets one message however many rules it breaks.
 */
function describeQueryErrors(
  errors: readonly ErrorObject[],
  properties: Readonly<Record<string, PropertySchema>>,
  toFieldErrors: (errors: readonly ErrorObject[]) => FieldError[],
): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors) {
    for (const fieldError of toFieldErrors([error])) {
      const own = properties[propertyOf(fieldError.pointer)]?.['x-message'];
      const message = own !== undefined && error.keyword !== 'required' ? own : fieldError.message;
      const key = `${fieldError.pointer}\u0000${message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ pointer: fieldError.pointer, message });
    }
  }
  return out;
}

/** One key's own detail when only that key is wrong; the query's otherwise. */
function detailOf(
  errors: readonly FieldError[],
  properties: Readonly<Record<string, PropertySchema>>,
  schema: JsonSchema,
): string {
  const details = new Set(errors.map((e) => properties[propertyOf(e.pointer)]?.['x-detail']));
  const [only] = details;
  if (details.size === 1 && only !== undefined) return only;
  return typeof schema['x-detail'] === 'string' ? schema['x-detail'] : DEFAULT_DETAIL;
}
