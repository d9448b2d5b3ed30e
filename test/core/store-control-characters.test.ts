/**
 * A payer's text as the bank sent it, control characters included (decision 57: kept and flagged, never
 * dropped): stored and read back unchanged on both engines, NUL too, which PostgreSQL text cannot hold.
 */
import assert from 'node:assert/strict';
import { prepareRecord } from '../../ingest/bank-webhook/prepare.ts';
import { bankRecord } from '../helpers.ts';
import { batchInput, normalisedRows } from '../support/batches.ts';
import { forEachEngine } from '../support/engines.ts';

const ROUTES = { BANKLZS: { kind: 'agency', agency: 'LZS' } } as const;
const RECEIVED = new Date('2026-11-20T02:00:00.000Z');
const AS_OF = new Date('2026-11-21T00:30:00+08:00');
// NUL, BEL, and U+E000 (the private-use character PostgreSQL's store escapes NUL with), each kept as sent.
const NAME = 'Ali\u0007bin\u0000Abu \uE000 \uE0000';
// Tab, line breaks and backslashes too: what PostgreSQL's COPY reads specially (decision 221).
const ADDRESS = '\u0000No 1,\uE000\u0000 Jalan\tDamai\r\nC:\\N \\.\u0000';

forEachEngine(
  "a payer's name and address holding NUL and other control characters are stored and read back as sent",
  async (t, open) => {
    void t;
    const store = await open();
    await store.partners.addPassword({ partnerId: 'demo-bank', label: 'main', hash: 'h1', now: RECEIVED });
    const sent = bankRecord({ name: NAME, time: '2026-11-20T09:15:23+08:00' });
    const record = prepareRecord({ ...sent, data: { ...sent.data, zakat_address: ADDRESS } }, ROUTES);
    const response = await store.bankPostings.ingestBatch(batchInput([record]));
    assert.deepEqual(
      response.results.map((r) => r.outcome),
      ['accepted'],
    );
    const stored = await store.bankPostings.get('demo-bank', record.orderno);
    assert.equal(stored?.name, NAME);
    assert.equal(stored?.record, record.canonical, 'the record is kept byte for byte');
    const resent = await store.bankPostings.ingestBatch(batchInput([record]));
    assert.deepEqual(
      resent.results.map((r) => r.outcome),
      ['duplicate'],
    );

    // Normalised and ledgered as the pipeline does, then read as the workbook reads the day.
    const [version] = await store.ledger.batchVersions(response.batch_id);
    assert.ok(version);
    await store.ledger.saveNormalised(
      normalisedRows([version], response.batch_id, {
        orderno: record.orderno,
        name: NAME,
        email: 'aisyah@example.my',
        zakatName: NAME,
        address: ADDRESS,
        city: '\uE000',
        postcode: '\\N',
        exceptions: ['CONTROL_CHARACTER'],
      }),
      [],
      RECEIVED,
    );
    await store.ledger.appendFromBatch(response.batch_id, 'LZS', RECEIVED);
    const snapshot = await store.reconSnapshot.open('LZS', '2026-11-20', AS_OF);
    try {
      const items = [];
      for await (const item of snapshot.transactions()) items.push(item);
      assert.deepEqual(
        items.map((i) => [i.name, i.zakatName, i.address, i.city, i.postcode]),
        [[NAME, NAME, ADDRESS, '\uE000', '\\N']],
      );
    } finally {
      await snapshot.close();
    }
  },
);
