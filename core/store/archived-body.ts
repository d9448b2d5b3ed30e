import { gunzipSync } from 'node:zlib';
import type { ArchivedBatch } from './recon-archive.ts';

/**
 * The bytes of an archived webhook body as received, however the archive keeps them (decision 203): as
 * they came (`body_encoding` NULL, every body archived before the encoding existed) or gzip-compressed.
 */
export function bodyAsReceived(stored: Buffer, encoding: string | null): Buffer {
  if (encoding === null) return stored;
  if (encoding === 'gzip') return gunzipSync(stored);
  throw new Error(`an archived body is kept as "${encoding}", which this version cannot read`);
}

/** A webhook batch as the archive keeps it: the body as stored, and how (`body_encoding`). */
export interface StoredBatch {
  id: string;
  partnerId: string;
  receivedAt: string;
  body: Buffer;
  encoding: string | null;
}

export type ReceivedBatch = Omit<StoredBatch, 'encoding'>;

/** An archived batch with its body as received. */
export function asReceived({ encoding, ...batch }: StoredBatch): ReceivedBatch {
  return { ...batch, body: bodyAsReceived(batch.body, encoding) };
}

/** The records of an archived body (it was schema-valid when accepted). */
export function transactionsOf(body: Buffer): { orderno: string }[] {
  const parsed = JSON.parse(body.toString('utf8')) as { transactions?: { orderno: string }[] };
  return parsed.transactions ?? [];
}

/** A posting as one string, (partner, orderno), for sets of the postings a replay needs. */
export function postingKey(partnerId: string, orderno: string): string {
  return `${partnerId}\n${orderno}`;
}

/** The (partner, orderno) of a postingKey. */
export function postingOfKey(key: string): [partnerId: string, orderno: string] {
  return key.split('\n') as [string, string];
}

/**
 * The postings a day's replay needs: those of the day's own bodies (`window`) and the `more` the engine's
 * query found (the day's postings, pendings carried in).
 */
export function wantedPostings(
  window: readonly ReceivedBatch[],
  more: readonly { partnerId: string; orderno: string }[],
): Set<string> {
  const wanted = new Set<string>();
  for (const batch of window)
    for (const record of transactionsOf(batch.body)) wanted.add(postingKey(batch.partnerId, record.orderno));
  for (const row of more) wanted.add(postingKey(row.partnerId, row.orderno));
  return wanted;
}

/**
 * What a day's replay is given: the earlier bodies (in the order given: received_at, then id) as excerpts
 * holding only the wanted postings' records, then the day's own bodies whole.
 */
export function replayBatches(
  earlier: readonly ReceivedBatch[],
  window: readonly ReceivedBatch[],
  wanted: ReadonlySet<string>,
): ArchivedBatch[] {
  const excerpts = earlier.map((batch) => ({
    partnerId: batch.partnerId,
    receivedAt: batch.receivedAt,
    excerpt: true,
    body: Buffer.from(
      JSON.stringify({
        transactions: transactionsOf(batch.body).filter((r) =>
          wanted.has(postingKey(batch.partnerId, r.orderno)),
        ),
      }),
    ),
  }));
  const whole = window.map((b) => ({
    partnerId: b.partnerId,
    receivedAt: b.receivedAt,
    body: b.body,
    excerpt: false,
  }));
  return [...excerpts, ...whole];
}
