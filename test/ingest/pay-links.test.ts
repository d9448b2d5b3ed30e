/**
 * The pay page with signed links (spec 4.1, 5.2; docs/qr.md): a link the service signed opens its order with
 * its extras; a link changed after signing is refused, GET and POST, and nothing is stored. Signed links
 * come from the QR generator (test/reports/qr-generators.test.ts covers that path end to end); here they are
 * made with the same function, so the pay page's rules can be checked one by one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signedPayLinkUrl, type PayLink } from '../../core/payments/pay-link.ts';
import { orderAt, problemOf, startApp, type TestApp } from '../helpers.ts';
import { paymentCount } from '../support/orders.ts';

const LINK: PayLink = {
  agency: 'LZS',
  paymentCategory: 'zakat-fitrah',
  refNo: 'FITRAH 2026/7',
  amount: '28.00',
  extras: { household: 'A-7', dependants: '4' },
  uses: 'once',
};

const signed = (app: TestApp, link: PayLink = LINK) =>
  signedPayLinkUrl(app.deps.config.publicUrls.base, app.deps.config.payLinkSecret, link);

const open = (url: string, accept = 'text/html') => fetch(url, { headers: { accept } });
const submit = (url: string, accept = 'text/html') =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept },
    body: 'email=siti%40example.my',
    redirect: 'manual',
  });

test('a signed pay link shows its extras, and its form opens the order with them', async (t) => {
  const app = await startApp(t);
  const url = signed(app);
  const page = await open(url);
  assert.equal(page.status, 200);
  const text = await page.text();
  assert.match(text, /<dt>household<\/dt>\s*<dd>A-7<\/dd>/);
  const action = /<form method="post" action="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, '&') ?? '';
  assert.equal(new URL(action, app.url).href, url, 'the form posts the signed link back');

  const posted = await submit(new URL(action, app.url).href);
  assert.equal(posted.status, 303);
  const order = await orderAt(app, posted);
  assert.equal(order?.amountSen, 2800);
  assert.deepEqual(JSON.parse(order?.extras ?? 'null'), LINK.extras);
});

test('a signed pay link with its amount, refNo, category or an extra changed is refused, and nothing is stored', async (t) => {
  const app = await startApp(t);
  const url = signed(app);
  const edits = [
    url.replace('/28.00?', '/2.80?'),
    url.replace('FITRAH%202026%2F7', 'FITRAH%202026%2F8'),
    url.replace('/zakat-fitrah/', '/zakat-pendapatan/'),
    url.replace('x.household=A-7', 'x.household=A-8'),
    url.replace('x.dependants=4&', ''),
    url.replace('?', '?x.note=free&'),
    url.replace(/sig=[0-9a-f]+/, `sig=${'0'.repeat(32)}`),
    `${url}&sig=${'0'.repeat(32)}`,
  ];
  for (const edited of edits) {
    assert.notEqual(edited, url);
    const page = await open(edited);
    assert.equal(page.status, 403, edited);
    assert.match(await page.text(), /This pay link was changed after Lembaga Zakat Selangor made it/);
    const api = await submit(edited, 'application/json');
    assert.equal(api.status, 403, edited);
    assert.equal((await problemOf(api)).type, 'https://docs.amil.my/problems/pay-link-tampered');
    assert.equal((await submit(edited)).status, 403, `POST ${edited} as a browser`);
  }
  assert.equal(await paymentCount(app.deps.store), 0);
});

test('an unsigned pay link still works, and without sig its query is ignored (no extras)', async (t) => {
  const app = await startApp(t);
  const url = `${app.url}/pay/LZS/zakat-fitrah/PLAIN-1/15.00?x.household=A-9`;
  assert.equal((await open(url)).status, 200);
  const posted = await submit(url);
  assert.equal(posted.status, 303);
  const order = await orderAt(app, posted);
  assert.equal(order?.amountSen, 1500);
  assert.equal(order?.extras, null, 'extras only ever come from a verified signature');
});

test('a signed link is signed by this deployment only: another PAY_LINK_SECRET refuses it', async (t) => {
  const app = await startApp(t);
  const other = await startApp(t, { PAY_LINK_SECRET: 'another-deployment-secret-of-32-chars-or-more' });
  const foreign = signedPayLinkUrl(app.url, other.deps.config.payLinkSecret, LINK);
  assert.equal((await open(foreign)).status, 403);
  assert.equal((await open(signed(app))).status, 200);
});

test('a signed pay link with x.__proto__ added is refused with a problem naming it, and nothing is stored', async (t) => {
  const app = await startApp(t);
  const url = signed(app).replace('?', '?x.__proto__=1&');
  const res = await open(url, 'application/json');
  assert.equal(res.status, 403);
  assert.match((await problemOf(res)).detail ?? '', /x\.__proto__/);
  assert.equal((await submit(url)).status, 403);
  assert.equal(await paymentCount(app.deps.store), 0);
});
