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
    out += `${out === '' ? '' : ','}${quotedKey(key)}:${canonicalJson(inner)}`;
  }
  return `{${out}}`;
}

// Records repeat the same few keys: quoting each once takes about a third off a record's canonical form.
// Bounded, so keys an attacker makes up cannot grow it; past the bound keys are quoted each time.
const QUOTED_KEYS_MAX = 1000;
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < QUOTED_KEYS_MAX) quotedKeys.set(key, quoted);
  }
  return quoted;
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
