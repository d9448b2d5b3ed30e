import { createHash, hash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/**
 * JSON with object keys sorted at every level: equal content gives equal text, whatever the key order
 * or number spelling (`10` and `10.0` are the same number). Written directly rather than by copying
 * into sorted objects: it runs once per ingested record.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const object = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(object).sort()) {
    const inner = object[key];
    if (inner === undefined) continue;
    out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${canonicalJson(inner)}`;
  }
  return `{${out}}`;
}

/** SHA-256 in hex. The one-shot `crypto.hash` costs half of a Hash object's per call (one per ingested record). */
export function sha256Hex(data: string | Buffer): string {
  return hash('sha256', data, 'hex');
}

/** SHA-256 of a file, streamed (a workbook may be 100 MB). */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
