/**
 * The dashboard's Excel export is paced by its client: a client that stops reading stops the export's
 * reads of the store (its rows would otherwise wait in the web process's memory), one that reads again
 * starts them again, and one that goes away ends them.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApp } from '../helpers.ts';
import { appDb, type AppDb } from '../support/app-db.ts';
import { dashboardUser, signIn } from '../support/dashboard.ts';

const ROWS = 12_000;

/**
 * `ROWS` payments of LZS on 2026-11-20 whose extra data compresses badly (4,000 random hex digits), so the
 * compressed workbook is large enough that the sockets' buffers between server and client take only a part.
 */
async function seedPayments(db: AppDb): Promise<void> {
  if (db.engine === 'sqlite')
    await db.run(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${ROWS})
       INSERT INTO payments (order_no, agency_code, ref_no, extra_data, amount_sen, email, return_url, status,
         payment_method, created_at, updated_at)
       SELECT printf('EXP-%06d', i), 'LZS', 'R' || i, hex(randomblob(2000)), 1000 + i, 'p@example.my', 'https://m.example/r', 'success', 'fpx',
         strftime('%Y-%m-%dT%H:%M:%fZ', '2026-11-20T01:00:00', '+' || (i % 3000) || ' seconds'),
         '2026-11-20T01:00:00.000Z' FROM s`,
    );
  else
    await db.run(
      `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, amount_sen, email, return_url, status,
         payment_method, created_at, updated_at)
       SELECT 'EXP-' || lpad(i::text, 6, '0'), 'LZS', 'R' || i,
         (SELECT string_agg(md5(random()::text || i || k), '') FROM generate_series(1, 125) AS k), 1000 + i,
         'p@example.my',
         'https://m.example/r', 'success', 'fpx',
         timestamptz '2026-11-20T01:00:00Z' + (i % 3000) * interval '1 second', now()
       FROM generate_series(1, ${ROWS}) AS i`,
    );
}

/** Waits until `value()` is above zero and has not changed for `quietMs` (or `maxMs` pass); its last value. */
async function settled(value: () => number, quietMs: number, maxMs: number): Promise<number> {
  let last = value();
  let since = Date.now();
  for (const start = Date.now(); Date.now() - start < maxMs;) {
    await sleep(100);
    if (value() !== last) [last, since] = [value(), Date.now()];
    else if (last > 0 && Date.now() - since >= quietMs) break;
  }
  return last;
}

test('an Excel export stops reading the store while its client does not read, and when it leaves', async (t) => {
  const app = await startApp(t);
  await seedPayments(appDb(t, app));
  // The real store's rows, counted as the export reads them.
  const reads = app.deps.store.dashboardReads;
  const paymentRows = reads.paymentRows.bind(reads);
  let read = 0;
  reads.paymentRows = async function* (filter) {
    for await (const row of paymentRows(filter)) {
      read += 1;
      yield row;
    }
  };
  const viewer = await signIn(app, await dashboardUser(app, { LZS: 'viewer' }), 'LZS');
  const request =
    `GET /dashboard/a/LZS/payments/export.xlsx?start=2026-11-20&end=2026-11-20 HTTP/1.1\r\n` +
    `Host: 127.0.0.1\r\nCookie: ${viewer.cookie}\r\n\r\n`;
  const open = async () => {
    const socket = net.connect(Number(new URL(app.url).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(request);
    const [head] = (await once(socket, 'data')) as [Buffer];
    assert.match(head.toString('latin1'), /^HTTP\/1\.1 200 /);
    // A client that reads nothing more: what the server sends waits in the sockets' buffers.
    socket.pause();
    return socket;
  };

  const client = await open();
  const whileStalled = await settled(() => read, 1000, 20_000);
  assert.ok(whileStalled < ROWS / 2, `read ${whileStalled} of ${ROWS} rows for a client reading nothing`);

  // The client reads again: so does the export.
  client.resume();
  for (const start = Date.now(); read < whileStalled + 3000 && Date.now() - start < 20_000;) await sleep(50);
  assert.ok(read >= whileStalled + 3000, `read ${read - whileStalled} more rows once the client reads`);

  // The client goes away: the export stops reading (at its next check, every 1,000 rows).
  client.destroy();
  const atLeave = read;
  await sleep(1500);
  assert.ok(read <= atLeave + 2000, `read ${read - atLeave} more rows after the client left`);
});
