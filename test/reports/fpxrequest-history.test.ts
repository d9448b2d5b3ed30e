import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reportToken, startApp } from '../helpers.ts';
import { postOrder } from '../support/merchant.ts';

test('the first fpxrequest history entry has code "" before the bank answers, as the rest of the API, not null', async (t) => {
  const app = await startApp(t);
  const created = await postOrder(app, {
    agency: 'LZS',
    refNo: `INV-${process.pid}-history`,
    amount: '10.00',
    email: 'ali@example.my',
    returnUrl: 'http://127.0.0.1:9/return',
  });
  assert.equal(created.status, 201);
  const { orderNo } = (await created.json()) as { orderNo: string };
  const token = await reportToken(app, ['LZS'], app.deps.clock.now());
  const res = await fetch(`${app.url}/api/report/v1/fpxrequest?fpx_seller_order_no=${orderNo}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  const { data } = (await res.json()) as {
    data: { fpx_debit_auth_code: unknown; history: { status: string; fpx_debit_auth_code: unknown }[] };
  };
  assert.equal(data.fpx_debit_auth_code, '', 'the order row says "" while nothing is known');
  const [first] = data.history;
  assert.equal(first?.status, 'pending');
  assert.equal(first?.fpx_debit_auth_code, '', 'the first entry too, not null');
});
