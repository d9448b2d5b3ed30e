import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Paths pino blanks out wherever they appear in a log line: credentials, signatures, IC and phone
 * numbers. Request bodies are never logged; these cover headers and structured fields.
 */
export const REDACT_PATHS = [
  'req.headers["x-api-password"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-password"]',
  'headers.authorization',
  'password',
  '*.password',
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  // PostgreSQL URLs carry the database password.
  'databaseUrl',
  '*.databaseUrl',
  'connectionString',
  '*.connectionString',
  'signature',
  '*.signature',
  'token',
  '*.token',
  'zakat_ic_no',
  '*.zakat_ic_no',
  '*.data.zakat_ic_no',
  '*.*.data.zakat_ic_no',
  'zakat_phone',
  '*.zakat_phone',
  '*.data.zakat_phone',
  '*.*.data.zakat_phone',
  'icNo',
  '*.icNo',
  'ic_no',
  '*.ic_no',
  'ic',
  '*.ic',
  'phone',
  '*.phone',
];

/**
 * Fields of a database error that quote the data itself: PostgreSQL's `detail` gives a refused row whole
 * ("Failing row contains (..., Siti binti Ahmad, siti@example.my, ...)") or a key's value ("Key
 * (email)=(...)"), `where` and `internalQuery` the statement's context. The code, the constraint, the table
 * and the column say what went wrong without them.
 */
const DATA_QUOTING_FIELDS = ['detail', 'where', 'internalQuery'];

/** pino's error serializer, with the fields that quote data replaced (and so in an aggregate's errors). */
function errWithoutData(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown;
  if (serialized === null || typeof serialized !== 'object') return serialized;
  // pino's own copy of an error is changed; something not an error comes back as it was, so it is copied
  // first: the caller's object is never changed.
  const fields = (serialized === err ? { ...serialized } : serialized) as Record<string, unknown>;
  for (const key of DATA_QUOTING_FIELDS) if (fields[key] !== undefined) fields[key] = '[redacted]';
  // An AggregateError's errors, each as one; or the aggregateErrors of an error serialized before.
  const inner = (err as { errors?: unknown }).errors;
  if (Array.isArray(fields.aggregateErrors))
    fields.aggregateErrors = (Array.isArray(inner) ? inner : fields.aggregateErrors).map(errWithoutData);
  return fields;
}

/** The one root logger of a process; everything else uses children of it. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Errors are logged as `err` throughout (pino's convention).
      serializers: { err: errWithoutData },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

/**
 * The same logger without redaction, for the lines written per request or per delivery whose every field
 * is a scalar of ours named none of REDACT_PATHS' names: no path can match them, yet pino runs its
 * wildcard paths over each field of each line (13 to 35 us a line, by machine). Made once per logger.
 */
export function scalarLines(logger: Logger): Logger {
  let lines = SCALAR_LINES.get(logger);
  if (!lines) {
    lines = logger.child({}, { redact: { paths: [] } });
    SCALAR_LINES.set(logger, lines);
  }
  return lines;
}

const SCALAR_LINES = new WeakMap<Logger, Logger>();
