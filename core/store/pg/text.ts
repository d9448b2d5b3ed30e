/**
 * Text holding NUL on PostgreSQL. A bank may send U+0000 in a payer's name or address, and amil keeps it
 * and flags it (decision 57); SQLite stores it, PostgreSQL text cannot hold it. So the PostgreSQL store
 * writes every text value with NUL as ESC '0' and ESC itself as ESC ESC (ESC: U+E000, a private-use
 * character), and reads every text value back through the inverse: a repository returns what it was given
 * on either engine. The pool applies both (pool.ts); JSON that SQL takes apart goes through `jsonParam`.
 */
const ESC = '\uE000';

/** A string as the PostgreSQL store writes it (without NUL). */
export function encodeText(text: string): string {
  if (!text.includes('\u0000') && !text.includes(ESC)) return text;
  // ESC first, so the ESC of an escaped NUL is not doubled.
  return text.replaceAll(ESC, ESC + ESC).replaceAll('\u0000', `${ESC}0`);
}

/** A string as the PostgreSQL store reads it back (the inverse of {@link encodeText}). */
export function decodeText(text: string): string {
  if (!text.includes(ESC)) return text;
  return text.replace(/\uE000([0\uE000])/g, (_, c: string) => (c === '0' ? '\u0000' : ESC));
}

function needsEncoding(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || value.includes(ESC);
  return Array.isArray(value) && value.some(needsEncoding);
}

function encodeParam(value: unknown): unknown {
  if (typeof value === 'string') return encodeText(value);
  if (Array.isArray(value)) return value.map(encodeParam);
  return value;
}

/** Query parameters as the PostgreSQL store sends them: strings, also in arrays, encoded. */
export function encodeParams(values: readonly unknown[]): unknown[] {
  // The common case (nothing to encode) sends the caller's array itself.
  return values.some(needsEncoding) ? values.map(encodeParam) : (values as unknown[]);
}

/**
 * A JSON parameter that SQL takes apart into text (`json_to_recordset($1::json)`): PostgreSQL refuses
 * `\u0000` there, so each string in it is encoded before it becomes JSON, and the pool sends the text as it
 * is (node-postgres calls `toPostgres`). Without NUL it is the plain JSON string, which the pool encodes.
 */
export function jsonParam(value: unknown): string | { toPostgres(): string } {
  const text = JSON.stringify(value);
  if (!text.includes('\\u0000')) return text;
  const encoded = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? encodeText(v) : v));
  return { toPostgres: () => encoded };
}

const describe = (value: unknown) =>
  typeof value === 'number' ? 'a number that is not finite' : typeof value;

/** A value in COPY's text format (docs: "COPY ... File Formats, Text Format"): NULL is `\N`. */
function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value)))
    return String(value);
  if (typeof value !== 'string')
    throw new TypeError(`a COPY field is text, a finite number or null, not ${describe(value)}`);
  const text = encodeText(value);
  // Backslash, tab, newline and carriage return are the only characters the text format reads specially.
  return /[\\\t\n\r]/.test(text)
    ? text.replace(/[\\\t\n\r]/g, (c) =>
        c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
      )
    : text;
}

/**
 * Rows as the data of `COPY ... FROM STDIN` in text format: one line per row, the fields tab-separated,
 * strings encoded as every other parameter is (no NUL). Text, numbers and null only.
 */
export function copyText(rows: readonly (readonly unknown[])[]): string {
  let text = '';
  for (const row of rows) {
    for (let i = 0; i < row.length; i += 1) text += (i === 0 ? '' : '\t') + copyField(row[i]);
    text += '\n';
  }
  return text;
}
