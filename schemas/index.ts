import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { CheckoutRequest, QrRequest } from './types.ts';
import type { FieldError, JsonSchema, Validator } from './validator-types.ts';
import { compileBankBatchValidator, type BatchValidator } from './bank-batch.ts';
import { compileJobValidators, type JobValidators } from './job-validators.ts';
import { compileQueryValidators, type QueryValidators } from './query-validators.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export type * from './types.ts';
export type * from './validator-types.ts';
export {
  MAX_OBJECT_KEYS,
  type BatchFieldError,
  type BatchProblems,
  type BatchValidator,
} from './bank-batch.ts';
export type { JobValidators } from './job-validators.ts';
export type {
  QueryInputs,
  QueryName,
  QueryOutcome,
  QueryValidator,
  QueryValidators,
} from './query-validators.ts';

const SCHEMA_DIR = path.dirname(fileURLToPath(import.meta.url));

/**
 * Every schema file of this folder and its subfolders (jobs/, queries/, responses/), keyed by its path in
 * the folder (`bank-transaction.json`, `jobs/normalise-job.json`, `queries/zakat-report-query.json`).
 */
export function loadSchemaFiles(): Map<string, JsonSchema> {
  const files = new Map<string, JsonSchema>();
  const names = readdirSync(SCHEMA_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
  for (const name of names) {
    files.set(name, JSON.parse(readFileSync(path.join(SCHEMA_DIR, name), 'utf8')) as JsonSchema);
  }
  return files;
}

/** The parts of the configuration that schemas depend on (schemas/ imports nothing of ours). */
export interface SchemaSettings {
  /** Accepted bank agency codes (BANK_AGENCY_ROUTES); replaces the enum written in bank-transaction.json. */
  bankAgencyCodes: readonly string[];
}

/** The schema documents with configured values applied: what the validators and OpenAPI both use. */
export function configuredSchemas(settings: SchemaSettings): Map<string, JsonSchema> {
  const schemas = loadSchemaFiles();
  const transaction = schemas.get('bank-transaction.json');
  const agency = (transaction?.properties as Record<string, { enum?: unknown }> | undefined)?.agency;
  if (!agency) throw new Error('bank-transaction.json has no agency property');
  agency.enum = [...settings.bankAgencyCodes];
  return schemas;
}

export interface Validators {
  bankWebhookRequest: BatchValidator;
  checkoutRequest: Validator<CheckoutRequest>;
  qrRequest: Validator<QrRequest>;
  /** The payloads of the pipeline's jobs, by schema $id (schemas/jobs/). */
  jobs: JobValidators;
  /** The query strings of the report routes, by name (schemas/queries/). */
  queries: QueryValidators;
}

/**
 * The rules behind the formats the schema files name, given by core (core/email.ts, core/time.ts) so that
 * each rule is written once and a payload, a query and the configuration can never disagree.
 */
export interface SchemaFormats {
  email: (value: string) => boolean;
  date: (value: string) => boolean;
}

export interface ValidatorSettings extends SchemaSettings {
  formats: SchemaFormats;
}

/** Compiles the validators once, at start-up. */
export function compileValidators(settings: ValidatorSettings): Validators {
  // The bank webhook's 422 lists the problems of a batch, so that instance collects all errors; the
  // fail-fast one decides first, so only a refused batch is explained (and that at a bounded cost).
  const schemas = configuredSchemas(settings);
  // Only the first instance checks the schemas against the JSON Schema meta-schema: the same schemas go to
  // all three, and each check compiles the meta-schema again (a third of the CPU of starting a process's
  // validators, paid by every web process, worker and CLI run).
  const ajv = createAjv({ allErrors: true }, settings.formats);
  const failFast = createAjv({ allErrors: false, validateSchema: false }, settings.formats);
  // Query strings are checked on their own instance: every problem listed, and the defaults of the files
  // filled in, so a route reads `items` without repeating its default.
  const queries = createAjv({ allErrors: true, useDefaults: true, validateSchema: false }, settings.formats);
  for (const schema of schemas.values()) {
    ajv.addSchema(schema);
    failFast.addSchema(schema);
    queries.addSchema(schema);
  }
  const request = schemas.get('bank-webhook-request.json');
  if (!request) throw new Error('bank-webhook-request.json is missing');
  return {
    bankWebhookRequest: compileBankBatchValidator(failFast, ajv, request, toFieldErrors),
    checkoutRequest: wrap<CheckoutRequest>(ajv.getSchema('https://schemas.amil.my/checkout-request.json')),
    qrRequest: wrap<QrRequest>(ajv.getSchema('https://schemas.amil.my/qr-request.json')),
    jobs: compileJobValidators(failFast, schemas, wrap),
    queries: compileQueryValidators(queries, schemas, toFieldErrors),
  };
}

function createAjv(
  options: { allErrors: boolean; useDefaults?: boolean; validateSchema?: boolean },
  formats: SchemaFormats,
): Ajv2020 {
  // verbose: errors carry their schema, whose `x-message` (a plain-language rule) replaces a raw pattern.
  const ajv = new Ajv2020({ ...options, strict: true, allowUnionTypes: false, verbose: true });
  // x-detail: a query's problem detail (schemas/query-validators.ts).
  ajv.addVocabulary(['x-message', 'x-detail']);
  addFormats(ajv, ['date-time', 'uri']);
  ajv.addFormat('email', formats.email);
  ajv.addFormat('date', formats.date);
  // JSON numbers are binary floats: ajv's own multipleOf divides them (0.07 / 0.01 = 7.000000000000001).
  // Money needs the decimal the sender wrote, which Number#toString gives back exactly.
  ajv.removeKeyword('multipleOf');
  ajv.addKeyword({
    keyword: 'multipleOf',
    type: 'number',
    schemaType: 'number',
    errors: false,
    validate: (divisor: number, value: number) => isDecimalMultiple(value, divisor),
  });
  return ajv;
}

function wrap<T>(validate: ValidateFunction | undefined): Validator<T> {
  if (!validate) throw new Error('schema not registered');
  const check = ((value: unknown) => validate(value)) as Validator<T>;
  check.errors = () => toFieldErrors(validate.errors ?? []);
  return check;
}

/** Turns ajv's errors into pointers at the offending value, with messages a partner can act on. */
export function toFieldErrors(errors: readonly ErrorObject[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  // A value that fails its format usually fails its pattern too; the format's message says more.
  const hasFormatError = new Set(errors.filter((e) => e.keyword === 'format').map((e) => e.instancePath));
  for (const error of errors) {
    if (error.keyword === 'pattern' && hasFormatError.has(error.instancePath)) continue;
    // propertyNames reports each bad key (with propertyName set), then a summary that says less.
    if (error.keyword === 'propertyNames') continue;
    const fieldError = describe(error);
    const key = `${fieldError.pointer}\u0000${fieldError.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(fieldError);
  }
  return out;
}

function describe(error: ErrorObject): FieldError {
  // An error about a key (propertyNames) points at that key.
  const at =
    error.propertyName === undefined
      ? error.instancePath
      : `${error.instancePath}/${escapePointer(error.propertyName)}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { pointer: `${at}/${escapePointer(String(params.missingProperty))}`, message: 'is required' };
    case 'additionalProperties':
      return {
        pointer: `${at}/${escapePointer(String(params.additionalProperty))}`,
        message: 'is not an allowed property (check its spelling)',
      };
    case 'enum':
      return { pointer: at, message: `must be one of: ${(params.allowedValues as unknown[]).join(', ')}` };
    case 'maxProperties':
      return { pointer: at, message: `must have at most ${String(params.limit)} keys` };
    case 'multipleOf':
      return { pointer: at, message: 'must have at most two decimal places' };
    case 'format':
      return { pointer: at, message: formatMessage(String(params.format)) };
    case 'pattern': {
      const message = (error.parentSchema as { 'x-message'?: string } | undefined)?.['x-message'];
      return { pointer: at, message: message ?? `must match the pattern ${String(params.pattern)}` };
    }
    default:
      return { pointer: at, message: error.message ?? 'is invalid' };
  }
}

function formatMessage(format: string): string {
  switch (format) {
    case 'email':
      return 'must be a valid email address';
    case 'date-time':
      return 'must be an ISO 8601 date-time with a timezone offset, e.g. 2026-11-20T09:15:00+08:00';
    case 'date':
      return 'must be a date that exists, YYYY-MM-DD';
    default:
      return `must be a valid ${format}`;
  }
}

/** A JSON pointer's reference token (RFC 6901): ~ and / escaped. */
export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** 10^-k (and 1) with their k: the divisors multipleOf takes the fast way. */
const POWERS_OF_TEN = new Map(Array.from({ length: 16 }, (_, k) => [Number(`1e-${k}`), k] as const));

/** True when `value` is an exact multiple of `divisor` in decimal, as written (not as a binary float). */
export function isDecimalMultiple(value: number, divisor: number): boolean {
  // A power of ten (0.01 for every amount): a multiple is a number with at most that many decimals, read
  // off its shortest form without the BigInt arithmetic below (a tenth of a record's schema check).
  if (POWERS_OF_TEN.has(divisor) && Number.isFinite(value)) {
    const text = String(value);
    if (!text.includes('e')) {
      const dot = text.indexOf('.');
      return dot < 0 || text.length - dot - 1 <= POWERS_OF_TEN.get(divisor)!;
    }
  }
  return isDecimalMultipleExactly(value, divisor);
}

/** isDecimalMultiple for any divisor, in exact decimal arithmetic. */
export function isDecimalMultipleExactly(value: number, divisor: number): boolean {
  const v = toDecimal(value);
  const d = toDecimal(divisor);
  if (!v || !d || d.digits === 0n) return false;
  const scale = Math.max(v.scale, d.scale);
  const scaledValue = v.digits * 10n ** BigInt(scale - v.scale);
  const scaledDivisor = d.digits * 10n ** BigInt(scale - d.scale);
  return scaledValue % scaledDivisor === 0n;
}

/** `n` as digits / 10^scale, from its shortest round-trip decimal form. */
function toDecimal(n: number): { digits: bigint; scale: number } | undefined {
  if (!Number.isFinite(n)) return undefined;
  const match = /^-?(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(n));
  if (!match) return undefined;
  const [, int = '', frac = '', exp = '0'] = match;
  let digits = BigInt(int + frac);
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    digits *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { digits, scale };
}
