import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { BankWebhookRequest } from './types.ts';
import type { FieldError, JsonSchema, Validator } from './validator-types.ts';

/**
 * Most keys an object of a batch (the batch, a record, a record's `data`) may have before it is refused
 * without looking at them one by one. A valid one has at most 13; the limit only bounds the cost of a
 * hostile body, where every unknown key would otherwise be one error (docs/bank-webhook.md).
 */
export const MAX_OBJECT_KEYS = 64;

/** A problem of a batch; `index` is the record's position when the problem is inside a record. */
export interface BatchFieldError extends FieldError {
  index?: number;
}

/** What is wrong with a batch: the first problems (at most the limit asked for), and how many records fail. */
export interface BatchProblems {
  errors: BatchFieldError[];
  /** Every record that breaks the schema, counted even past the limit. */
  invalidRecords: number;
  /** True when problems beyond `errors` exist. */
  truncated: boolean;
}

/** The batch validator: a fail-fast check, and an explanation whose cost is bounded whatever the shape. */
export type BatchValidator = Validator<BankWebhookRequest> & {
  explain(value: unknown, limit: number): BatchProblems;
};

type ToFieldErrors = (errors: readonly ErrorObject[]) => FieldError[];

const ENVELOPE_ID = 'https://schemas.amil.my/bank-webhook-envelope.json';
const TRANSACTION_ID = 'https://schemas.amil.my/bank-transaction.json';

/**
 * Builds the batch validator. ajv with allErrors over a whole batch costs one error object per unknown key,
 * and a `$ref`'d record's errors are appended with Array#concat, so 5,000 records with 80 unknown keys each
 * took 8 s of one thread. Instead: a fail-fast pass decides; only a refused batch is explained, record by
 * record, stopping at the limit, with oversized objects named as one problem each.
 */
export function compileBankBatchValidator(
  failFast: Ajv2020,
  full: Ajv2020,
  request: JsonSchema,
  toFieldErrors: ToFieldErrors,
): BatchValidator {
  const check = compiled(failFast, 'https://schemas.amil.my/bank-webhook-request.json');
  const checkRecord = compiled(failFast, TRANSACTION_ID);
  const explainRecord = compiled(full, TRANSACTION_ID);
  const envelope = structuredClone(request);
  envelope.$id = ENVELOPE_ID;
  // The envelope alone: its records are explained one at a time below.
  delete (envelope.properties as { transactions: { items?: unknown } }).transactions.items;
  const explainEnvelope = full.compile(envelope);

  const explain = (value: unknown, limit: number): BatchProblems => {
    const errors: BatchFieldError[] = [];
    let truncated = false;
    const add = (found: readonly BatchFieldError[]): void => {
      for (const error of found) {
        if (errors.length < limit) errors.push(error);
        else truncated = true;
      }
    };
    add(oversized(value, '') ?? explainWith(explainEnvelope, value, toFieldErrors));
    const transactions = (value as { transactions?: unknown } | null)?.transactions;
    let invalidRecords = 0;
    if (Array.isArray(transactions)) {
      transactions.forEach((record: unknown, index) => {
        if (checkRecord(record)) return;
        invalidRecords += 1;
        if (errors.length >= limit) {
          truncated = true;
          return;
        }
        add(
          explainOne(record, explainRecord, toFieldErrors).map((e) => at(`/transactions/${index}`, index, e)),
        );
      });
    }
    return { errors, invalidRecords, truncated };
  };

  let last: unknown;
  const validator = ((value: unknown) => {
    last = value;
    return check(value);
  }) as BatchValidator;
  validator.errors = () => explain(last, Number.POSITIVE_INFINITY).errors;
  validator.explain = explain;
  return validator;
}

/** One record's problems; an oversized record or `data` is one problem, not one per key. */
function explainOne(record: unknown, validate: ValidateFunction, toFieldErrors: ToFieldErrors): FieldError[] {
  const tooBig = oversized(record, '');
  if (tooBig) return tooBig;
  const data = (record as { data?: unknown }).data;
  const dataTooBig = oversized(data, '/data');
  if (!dataTooBig) return explainWith(validate, record, toFieldErrors);
  // The rest of the record is still explained, with an empty data standing in for the oversized one.
  return [...explainWith(validate, { ...(record as object), data: {} }, toFieldErrors), ...dataTooBig];
}

function explainWith(validate: ValidateFunction, value: unknown, toFieldErrors: ToFieldErrors): FieldError[] {
  return validate(value) ? [] : toFieldErrors(validate.errors ?? []);
}

function oversized(value: unknown, pointer: string): FieldError[] | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value).length;
  if (keys <= MAX_OBJECT_KEYS) return undefined;
  return [{ pointer, message: `has ${keys} properties; at most ${MAX_OBJECT_KEYS} are allowed` }];
}

function at(prefix: string, index: number, error: FieldError): BatchFieldError {
  return { ...error, pointer: `${prefix}${error.pointer}`, index };
}

function compiled(ajv: Ajv2020, id: string): ValidateFunction {
  const validate = ajv.getSchema(id);
  if (!validate) throw new Error(`schema not registered: ${id}`);
  return validate;
}
