/**
 * Orders, callbacks and receipts: the same guarantees on SQLite and on PostgreSQL (test/support/pg-stores.ts),
 * including when many calls race (on PostgreSQL they run on several connections at once, as several
 * machines would).
 */
import assert from 'node:assert/strict';
import type { OrderRow, PaymentResult } from '../../core/store/index.ts';
import { onBothEngines, type EngineStore as EngineHalf } from '../support/engines.ts';
import { ORDER_AT, newOrder } from '../support/orders.ts';

const AT = ORDER_AT;
const LATER = '2026-11-20T02:05:00.000Z';

const attempt = (ref: string) => ({
  paymentMethod: 'fpx' as const,
  bankId: 'TEST0021',
  bankName: 'Test Bank',
  addChargeSen: 0,
  acquirerRef: ref,
  at: AT,
});

const paid = (code = '00'): PaymentResult => ({
  status: code === '00' ? 'success' : code === '09' ? 'pending' : 'failed',
  code,
  txnId: 'TXN1',
  txnTime: '20261120100500',
  source: 'test',
});

const toMerchant = (order: OrderRow) => ({
  url: order.returnUrl,
  fields: { orderNo: order.orderNo, status: order.status },
});

async function withAgency(store: EngineHalf): Promise<EngineHalf> {
  await store.addAgency('LZS');
  return store;
}

onBothEngines('an order is created once per refNo, and the repeat gets the existing order', async (_t, s) => {
  const store = await withAgency(s);
  const first = await store.orders.createOrder(newOrder('O1'));
  assert.equal(first.created, true);
  assert.equal(first.order.status, 'pending');
  assert.equal(first.order.amountSen, 1000);
  assert.equal(first.order.createdAt, AT);
  const again = await store.orders.createOrder(newOrder('O2', { refNo: 'REF-O1' }));
  assert.deepEqual(again, { created: false, order: first.order });
  assert.equal(await store.orders.order('O2'), undefined);
  assert.deepEqual(await store.orders.orderByRef('LZS', 'REF-O1'), first.order);
});

onBothEngines('twenty checkouts of one refNo at once create exactly one order', async (_t, s) => {
  const store = await withAgency(s);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => store.orders.createOrder(newOrder(`R${i}`, { refNo: 'SAME' }))),
  );
  assert.equal(results.filter((r) => r.created).length, 1);
  const winner = results.find((r) => r.created)!.order.orderNo;
  assert.ok(results.every((r) => r.order.orderNo === winner));
  const rows = await store.sql<{ n: number }>(`SELECT count(*) AS n FROM payments WHERE ref_no = 'SAME'`);
  assert.equal(Number(rows[0]!.n), 1);
});

onBothEngines('pay-link payments of one link are each new orders under the same refNo', async (_t, s) => {
  const store = await withAgency(s);
  const link = { link: '/pay/LZS/fitrah?refNo=HOUSE-1', uses: 'many' as const };
  const a = await store.orders.createOrder(
    newOrder('P1', { refNo: 'HOUSE-1', payLink: link, returnUrl: '' }),
  );
  const b = await store.orders.createOrder(
    newOrder('P2', { refNo: 'HOUSE-1', payLink: link, returnUrl: '' }),
  );
  assert.equal(a.created && b.created, true);
  assert.equal(a.order.source, 'pay-link');
  assert.equal(b.order.payLink, link.link);
  assert.equal(await store.orders.orderByRef('LZS', 'HOUSE-1'), undefined);
});

onBothEngines(
  'of payers of one once-link starting at the same moment, only one reaches the bank',
  async (_t, s) => {
    const store = await withAgency(s);
    const link = { link: '/pay/LZS/fitrah?refNo=HOUSE-2', uses: 'once' as const };
    const payers = Array.from({ length: 16 }, (_, i) => `L${i + 1}`);
    for (const no of payers)
      await store.orders.createOrder(newOrder(no, { refNo: 'HOUSE-2', payLink: link, returnUrl: '' }));
    const refusals = await Promise.all(payers.map((no) => store.orders.startAttempt(no, attempt(`A-${no}`))));
    assert.equal(refusals.filter((r) => r === undefined).length, 1);
    assert.ok(refusals.every((r) => r === undefined || r === 'link-in-progress'));
    assert.equal(await store.orders.payLinkState(link.link), 'in-progress');
    const started = payers[refusals.indexOf(undefined)]!;
    await store.orders.settle(started, paid(), LATER, () => undefined);
    assert.equal(await store.orders.payLinkState(link.link), 'paid');
    const other = started === 'L1' ? 'L2' : 'L1';
    assert.equal(await store.orders.startAttempt(other, attempt('late')), 'link-paid');
  },
);

onBothEngines('an attempt starts once; the work lists see unpaid and awaiting orders', async (_t, s) => {
  const store = await withAgency(s);
  await store.orders.createOrder(newOrder('W1'));
  await store.orders.createOrder(newOrder('W2', { at: LATER }));
  assert.deepEqual(
    (await store.orders.unpaidBefore(LATER, 10)).map((o) => o.orderNo),
    ['W1'],
  );
  assert.equal(await store.orders.startAttempt('W1', attempt('ACQ-1')), undefined);
  assert.equal(await store.orders.startAttempt('W1', attempt('ACQ-2')), 'already-started');
  assert.equal(await store.orders.startAttempt('NOPE', attempt('ACQ-3')), 'already-started');
  const awaiting = await store.orders.awaitingAcquirer(10);
  assert.deepEqual(
    awaiting.map((o) => [o.orderNo, o.acquirerRef, o.paymentMethod]),
    [['W1', 'ACQ-1', 'fpx']],
  );
});

onBothEngines(
  'a result decided on the order before its attempt (the unpaid sweep) changes nothing once the payer is at the bank',
  async (_t, s) => {
    const store = await withAgency(s);
    const { order: unpaid } = await store.orders.createOrder(newOrder('XA1'));
    // The sweep read the order with no attempt; the payer then went to the bank before the sweep settled.
    assert.equal(await store.orders.startAttempt('XA1', attempt('ACQ-XA1')), undefined);
    const abandoned: PaymentResult = {
      status: 'failed',
      code: 'XA',
      txnId: null,
      txnTime: null,
      source: 'abandoned',
      attempt: unpaid.acquirerRef,
      ownTimeout: true,
    };
    const late = await store.orders.settle('XA1', abandoned, LATER, toMerchant);
    assert.equal(late.outcome, 'unchanged');
    assert.deepEqual([late.order.status, late.order.acquirerRef], ['pending', 'ACQ-XA1']);
    // The bank's approval then applies as any other.
    const approved = await store.orders.settle('XA1', { ...paid(), attempt: 'ACQ-XA1' }, LATER, toMerchant);
    assert.equal(approved.outcome, 'applied');
    assert.equal(approved.order.status, 'success');
    const callbacks = await store.sql<{ status: string }>(
      "SELECT status FROM callbacks WHERE order_no = 'XA1' ORDER BY id",
    );
    assert.deepEqual(
      callbacks.map((c) => c.status),
      ['success'],
      'the merchant never hears of a failure',
    );
    assert.deepEqual(await store.sql('SELECT order_no FROM payment_anomalies'), []);
  },
);

onBothEngines(
  'a pending answer, or a timeout of amil’s own, reaching a final payment is old news, not an anomaly',
  async (_t, s) => {
    const store = await withAgency(s);
    await store.orders.createOrder(newOrder('OLD1'));
    await store.orders.startAttempt('OLD1', attempt('ACQ-OLD1'));
    assert.equal((await store.orders.settle('OLD1', paid(), LATER, toMerchant)).outcome, 'applied');
    // An enquiry asked before the bank approved, answered after: pending.
    const pending = await store.orders.settle('OLD1', paid('09'), LATER, toMerchant);
    assert.deepEqual([pending.outcome, pending.order.status], ['unchanged', 'success']);
    // The expiry sweep's XP, decided on that pending answer.
    const expired: PaymentResult = { ...paid('XP'), txnId: null, source: 'expiry', ownTimeout: true };
    assert.equal((await store.orders.settle('OLD1', expired, LATER, toMerchant)).outcome, 'unchanged');
    assert.deepEqual(await store.sql('SELECT order_no FROM payment_anomalies'), []);
    // The acquirer's own final answer against it is still a contradiction.
    assert.equal((await store.orders.settle('OLD1', paid('51'), LATER, toMerchant)).outcome, 'contradiction');
    const anomalies = await store.sql<{ incoming_code: string }>(
      'SELECT incoming_code FROM payment_anomalies',
    );
    assert.deepEqual(
      anomalies.map((a) => a.incoming_code),
      ['51'],
    );
  },
);

onBothEngines(
  'a settlement applies once, with its event, callback, receipt and their jobs in one transaction',
  async (_t, s) => {
    const store = await withAgency(s);
    await store.orders.createOrder(newOrder('S1'));
    await store.orders.startAttempt('S1', attempt('ACQ-S1'));
    const first = await store.orders.settle('S1', paid(), LATER, toMerchant, () => 'payer@example.my');
    assert.equal(first.outcome, 'applied');
    assert.equal(first.order.status, 'success');
    assert.equal(first.order.debitAuthCode, '00');
    assert.equal(first.order.updatedAt, LATER);
    assert.equal((await store.orders.settle('S1', paid(), LATER, toMerchant)).outcome, 'unchanged');
    const contradiction = await store.orders.settle('S1', paid('51'), LATER, toMerchant);
    assert.equal(contradiction.outcome, 'contradiction');
    assert.equal(contradiction.order.status, 'success');
    const anomalies = await store.sql<{ stored_status: string; incoming_code: string }>(
      'SELECT stored_status, incoming_code FROM payment_anomalies',
    );
    assert.deepEqual(
      anomalies.map((a) => ({ ...a })),
      [{ stored_status: 'success', incoming_code: '51' }],
    );
    const callbacks = await store.callbacks.ofOrder('S1');
    assert.equal(callbacks.length, 1);
    assert.equal(callbacks[0]!.status, 'success');
    assert.deepEqual(JSON.parse(callbacks[0]!.fields), { orderNo: 'S1', status: 'success' });
    const receipt = await store.receipts.of('S1');
    assert.equal(receipt?.recipient, 'payer@example.my');
    const jobs = (await store.outbox.pending(10, new Date(LATER))).map((r) => r.jobId).sort();
    assert.deepEqual(jobs, ['receipt.S1'], "the receipt's job; the callback is due in its own row");
    const [due, ...more] = await store.callbacks.leaseDue(10, LATER, '2026-11-20T02:06:00.000Z');
    assert.equal(due?.callback.id, callbacks[0]!.id);
    assert.equal(more.length, 0);
  },
);

onBothEngines('ten settlements of one order at once apply exactly one result', async (_t, s) => {
  const store = await withAgency(s);
  await store.orders.createOrder(newOrder('C1'));
  await store.orders.startAttempt('C1', attempt('ACQ-C1'));
  const outcomes = await Promise.all(
    Array.from({ length: 10 }, () => store.orders.settle('C1', paid(), LATER, toMerchant)),
  );
  assert.equal(outcomes.filter((o) => o.outcome === 'applied').length, 1);
  assert.equal((await store.callbacks.ofOrder('C1')).length, 1);
  const events = await store.sql<{ n: number }>(
    `SELECT count(*) AS n FROM payment_events WHERE order_no = 'C1'`,
  );
  assert.equal(Number(events[0]!.n), 2);
});

onBothEngines(
  'a callback is leased by one worker at a time, a superseded one never, a retry at its time',
  async (_t, s) => {
    const store = await withAgency(s);
    await store.orders.createOrder(newOrder('K1'));
    await store.orders.startAttempt('K1', attempt('ACQ-K1'));
    await store.orders.settle('K1', paid('09'), AT, toMerchant);
    await store.orders.settle('K1', paid(), LATER, toMerchant);
    const [older, newer] = await store.callbacks.ofOrder('K1');
    assert.equal(older!.state, 'superseded');
    assert.equal(newer!.state, 'queued');
    const lease = '2026-11-20T02:06:00.000Z';
    // As many leases at once as the pool has connections: on PostgreSQL they truly overlap.
    const leases = await Promise.all(
      Array.from({ length: 20 }, () => store.callbacks.leaseDue(5, LATER, lease)),
    );
    assert.deepEqual(
      leases.flat().map((l) => l.callback.id),
      [newer!.id],
      'the queued one, once; the superseded one never',
    );

    await store.callbacks.finishAttempt(
      newer!.id,
      { at: LATER, statusCode: 500, latencyMs: 12.4, error: null, responsePrefix: 'oops' },
      { state: 'queued', nextAttemptAt: lease },
    );
    assert.equal((await store.callbacks.list({ failed: true, limit: 10 }))[0]?.id, newer!.id);
    const leasedAgain = await store.callbacks.leaseDue(5, lease, '2026-11-20T02:07:00.000Z');
    assert.deepEqual(
      leasedAgain.map((l) => [l.callback.id, l.callback.attempts]),
      [[newer!.id, 1]],
    );
    await store.callbacks.finishAttempt(
      newer!.id,
      { at: lease, statusCode: 200, latencyMs: 3, error: null, responsePrefix: 'ok' },
      { state: 'delivered' },
    );
    const [, delivered] = await store.callbacks.ofOrder('K1');
    assert.equal(delivered!.state, 'delivered');
    assert.equal(delivered!.attempts, 2);
    assert.deepEqual(
      delivered!.attemptLog.map((a) => [a.statusCode, a.latencyMs, a.responsePrefix]),
      [
        [500, 12, 'oops'],
        [200, 3, 'ok'],
      ],
    );
    assert.deepEqual(await store.callbacks.list({ failed: true, limit: 10 }), []);
    assert.deepEqual(await store.outbox.pending(10, new Date('2026-11-21T00:00:00Z')), [], 'no outbox row');

    const redelivered = await store.callbacks.redeliver('K1', lease);
    assert.equal(typeof redelivered, 'number');
    const all = await store.callbacks.ofOrder('K1');
    assert.deepEqual(
      all.map((c) => [c.status, c.state]),
      [
        ['pending', 'superseded'],
        ['success', 'delivered'],
        ['success', 'queued'],
      ],
    );
    assert.equal(await store.callbacks.redeliver('NONE', lease), undefined);
    const [again] = await store.callbacks.leaseDue(5, lease, '2026-11-20T02:07:00.000Z');
    assert.equal(again?.callback.id, redelivered, 'a redelivery is due at once');
  },
);

onBothEngines(
  'a receipt is claimed by one sender at a time, numbered by attempt, and settles once sent',
  async (_t, s) => {
    const store = await withAgency(s);
    await store.orders.createOrder(newOrder('E1'));
    await store.orders.startAttempt('E1', attempt('ACQ-E1'));
    await store.orders.settle(
      'E1',
      paid(),
      LATER,
      () => undefined,
      () => 'payer@example.my',
    );
    const lease = '2026-11-20T02:10:00.000Z';
    const claims = await Promise.all(
      Array.from({ length: 6 }, () => store.receipts.claim('E1', LATER, lease)),
    );
    const won = claims.filter((c) => 'claimed' in c);
    assert.equal(won.length, 1);
    assert.ok(claims.every((c) => 'claimed' in c || c.refused === 'busy'));
    const { claimed, attempt: first } = won[0] as { claimed: { id: number }; attempt: number };
    assert.equal(first, 1);
    await store.receipts.recordAttempt(claimed.id, {
      attempt: 1,
      at: LATER,
      outcome: 'failed',
      messageId: null,
      detail: 'down',
    });
    const again = await store.receipts.claim('E1', LATER, lease);
    assert.ok('claimed' in again && again.attempt === 2);
    await store.receipts.recordAttempt(claimed.id, {
      attempt: 2,
      at: lease,
      outcome: 'sent',
      messageId: '<m@x>',
      detail: null,
    });
    assert.deepEqual(await store.receipts.claim('E1', lease, lease), { refused: 'done' });
    const receipt = await store.receipts.of('E1');
    assert.equal(receipt?.state, 'sent');
    assert.equal(receipt?.sentAt, lease);
    assert.deepEqual(
      receipt?.attempts.map((a) => a.outcome),
      ['failed', 'sent'],
    );
    assert.equal(await store.receipts.of('NONE'), undefined);
  },
);

onBothEngines('a payment seeded as given reads back with the same types', async (_t, s) => {
  const store = await withAgency(s);
  const row = {
    orderNo: 'I1',
    agencyCode: 'LZS',
    refNo: 'REF-I1',
    extraData: '{"a":1}',
    paymentCategory: 'fitrah',
    amountSen: 123456789012,
    addChargeSen: 150,
    email: 'payer@example.my',
    returnUrl: 'https://merchant.example/return',
    paymentMethod: 'card' as const,
    status: 'success' as const,
    debitAuthCode: '00',
    fpxTxnId: 'T1',
    fpxTxnTime: '20261120100500',
    createdAt: AT,
    updatedAt: LATER,
    source: 'checkout' as const,
    payLink: null,
  };
  await store.orders.insert(row, 'seed');
  const order = await store.orders.order('I1');
  assert.deepEqual(
    {
      ...order,
      extras: undefined,
      formToken: undefined,
      acquirerRef: undefined,
      bankId: undefined,
      bankName: undefined,
      payLinkUses: undefined,
    },
    {
      ...row,
      extras: undefined,
      formToken: undefined,
      acquirerRef: undefined,
      bankId: undefined,
      bankName: undefined,
      payLinkUses: undefined,
    },
  );
});
