import { gunzipSync } from 'node:zlib';

/**
 * The bytes of an archived webhook body as received, however the archive keeps them (decision 203): as
 * they came (`body_encoding` NULL, every body archived before the encoding existed) or gzip-compressed.
 */
export function bodyAsReceived(stored: Buffer, encoding: string | null): Buffer {
  if (encoding === null) return stored;
  if (encoding === 'gzip') return gunzipSync(stored);
  throw new Error(`an archived body is kept as "${encoding}", which this version cannot read`);
}
