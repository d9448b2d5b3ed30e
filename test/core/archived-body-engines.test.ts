/**
 * The archive of webhook bodies kept gzip-compressed (decision 203): read back as the bytes received by
 * the replay's export, beside bodies kept as they came (every body archived before), on both engines.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { prepareRecord } from '../../ingest/bank-webhook/prepare.ts';
import type { IngestBatchInput } from '../../core/store/bank-postings.ts';
import { bankRecord } from '../helpers.ts';
import { forEachEngine } from '../support/engines.ts';

const ROUTES = { BANKLZS: { kind: 'agency', agency: 'LZS' } } as const;
const DAY = '2026-11-20';
const AS_OF = new Date('2026-11-20T15:00:00.000Z');

/** A batch received at `at` whose body is `text`, archived as received or gzip-compressed. */
function batchOf(text: string, at: string, gzip: boolean): IngestBatchInput {
  const received = Buffer.from(text);
  const { transactions } = JSON.parse(text) as { transactions: Parameters<typeof prepareRecord>[0][] };
  return {
    partnerId: 'demo-bank',
    receivedAt: new Date(at),
    businessDate: DAY,
    contentType: 'application/json',
    ...(gzip ? { body: gzipSync(received), bodyEncoding: 'gzip' as const } : { body: received }),
    bodySha256: createHash('sha256').update(received).digest('hex'),
    records: transactions.map((tx) => prepareRecord(tx, ROUTES)),
  };
}

forEachEngine(
  'a body archived gzip-compressed is exported as the bytes received, beside one archived as it came',
  async (_t, open) => {
    const store = await open();
    await store.partners.addPassword({ partnerId: 'demo-bank', label: 'main', hash: 'h', now: AS_OF });
    // Odd spacing and an empty free text: the export must give back these bytes, not a re-serialisation.
    const compressed = `{ "transactions" : [ ${JSON.stringify(bankRecord({ orderno: 'GZ-1' }), null, 3)} ] }\n`;
    const plain = `{"transactions":[${JSON.stringify(bankRecord({ orderno: 'AS-IS-1' }))}]}`;
    const first = await store.bankPostings.ingestBatch(batchOf(compressed, '2026-11-20T02:00:00.000Z', true));
    await store.bankPostings.ingestBatch(batchOf(plain, '2026-11-20T03:00:00.000Z', false));
    assert.equal(first.summary.accepted, 1);

    const rows = await store.sql<{ body_encoding: string | null; body: Buffer }>(
      'SELECT body_encoding, body FROM webhook_batches ORDER BY received_at',
    );
    assert.deepEqual(
      rows.map((r) => r.body_encoding),
      ['gzip', null],
    );
    assert.ok(rows[0]?.body.subarray(0, 2).equals(Buffer.from([0x1f, 0x8b])), 'kept as gzip');

    const { batches } = await store.reconArchive.exportDay(DAY, AS_OF);
    assert.deepEqual(
      batches.map((b) => b.body.toString('utf8')),
      [compressed, plain],
    );
  },
);

forEachEngine(
  'a gzip-compressed body of an earlier day gives the excerpt of the postings the day shows',
  async (_t, open) => {
    const store = await open();
    await store.partners.addPassword({ partnerId: 'demo-bank', label: 'main', hash: 'h', now: AS_OF });
    const pending = bankRecord({ orderno: 'EARLY-1', status: 'pending', time: '2026-11-19T10:00:00+08:00' });
    const other = bankRecord({ orderno: 'EARLY-2', time: '2026-11-19T10:00:00+08:00' });
    const earlier = batchOf(
      JSON.stringify({ transactions: [pending, other] }),
      '2026-11-19T02:00:00.000Z',
      true,
    );
    await store.bankPostings.ingestBatch({ ...earlier, businessDate: '2026-11-19' });
    // Settled on the day: the day's export carries the earlier body's record of that posting.
    const settled = JSON.stringify({
      transactions: [{ ...pending, status: 'success', time: '2026-11-20T09:00:00+08:00' }],
    });
    assert.equal(
      (await store.bankPostings.ingestBatch(batchOf(settled, '2026-11-20T02:00:00.000Z', false))).summary
        .updated,
      1,
    );

    const { batches } = await store.reconArchive.exportDay(DAY, AS_OF);
    const excerpt = batches.find((b) => b.excerpt);
    assert.ok(excerpt, 'the earlier body is exported as an excerpt');
    assert.deepEqual(JSON.parse(excerpt.body.toString('utf8')), { transactions: [pending] });
  },
);
