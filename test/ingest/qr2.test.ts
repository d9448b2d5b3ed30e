/** `GET /qr2/?q=` (spec 4.1): the unsigned QR code of a pay link of this service, and nothing else. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signedPayLinkUrl } from '../../core/payments/pay-link.ts';
import { problemOf, startApp, type TestApp } from '../helpers.ts';
import { decodeQrPng } from '../support/qr.ts';

const qr2 = (app: TestApp, q: string, extra = '', headers: Record<string, string> = {}) =>
  fetch(`${app.url}/qr2/?q=${encodeURIComponent(q)}${extra}`, { headers });

test('the QR code of a pay link of this service: a PNG that decodes to the link, cacheable for a day', async (t) => {
  const app = await startApp(t);
  const link = `${app.url}/pay/LZS/zakat-fitrah/FITRAH%2042/28.00`;
  const res = await qr2(app, link);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'image/png');
  assert.equal(res.headers.get('cache-control'), 'public, max-age=86400');
  assert.deepEqual(decodeQrPng(new Uint8Array(await res.arrayBuffer())), {
    text: link,
    width: 256,
    height: 256,
  });

  const large = await qr2(app, link, '&size=1024');
  assert.equal(decodeQrPng(new Uint8Array(await large.arrayBuffer())).width, 1024);
  const etag = res.headers.get('etag') ?? '';
  const again = await qr2(app, link, '', { 'if-none-match': etag, 'cache-control': 'max-age=0' });
  assert.equal(again.status, 304);
  assert.notEqual(large.headers.get('etag'), etag, 'another size, another image');

  // The scanned link opens the pay page at its amount.
  const page = await fetch(link, { headers: { accept: 'text/html' } });
  assert.match(await page.text(), /<dd>RM 28\.00<\/dd>/);
});

test('a signed pay link renders too, unchanged; a changed one does not', async (t) => {
  const app = await startApp(t);
  const signed = signedPayLinkUrl(app.url, app.deps.config.payLinkSecret, {
    agency: 'PPZ',
    paymentCategory: 'zakat-simpanan',
    refNo: 'S-1',
    amount: '100.00',
    extras: { branch: 'KL' },
    uses: 'once',
  });
  const res = await qr2(app, signed);
  assert.equal(res.status, 200);
  assert.equal(decodeQrPng(new Uint8Array(await res.arrayBuffer())).text, signed);
  const changed = await qr2(app, signed.replace('/100.00?', '/10.00?'));
  assert.equal(changed.status, 400);
  assert.match((await problemOf(changed)).detail ?? '', /was changed after/);
});

test('anything but a pay link of this service is refused with 400 and a clear detail: not an open QR generator', async (t) => {
  const app = await startApp(t);
  const port = new URL(app.url).port;
  const cases: [string, RegExp][] = [
    ['https://evil.example.com/pay/LZS/zakat-fitrah/R1/10.00', /Only pay links of this service/],
    [`http://127.0.0.1:${Number(port) + 1}/pay/LZS/zakat-fitrah/R1/10.00`, /Only pay links of this service/],
    [`https://127.0.0.1:${port}/pay/LZS/zakat-fitrah/R1/10.00`, /Only pay links of this service/],
    [`http://localhost:${port}/pay/LZS/zakat-fitrah/R1/10.00`, /Only pay links of this service/],
    [`http://someone@127.0.0.1:${port}/pay/LZS/zakat-fitrah/R1/10.00`, /Only pay links of this service/],
    [`${app.url}/pay/LZS/zakat-fitrah/R1/10.00#x`, /Only pay links of this service/],
    [`${app.url}/v2/checkout`, /must be a pay link/],
    [`${app.url}/pay/LZS/zakat-fitrah/10.00`, /must be a pay link/],
    [`${app.url}/pay/LZS/zakat-fitrah/R1/10.00/more`, /must be a pay link/],
    [`${app.url}/pay/NOPE/zakat-fitrah/R1/10.00`, /no such agency or payment category/],
    [`${app.url}/pay/LZS/zakat-kereta/R1/10.00`, /no such agency or payment category/],
    [`${app.url}/pay/LZS/zakat-fitrah/R1/0.50`, /at least 1\.00/],
    [`${app.url}/pay/LZS/zakat-fitrah/R~1/10.00`, /without ~/],
    ['not a url', /must be an absolute pay link/],
    [`${app.url}/pay/LZS/zakat-fitrah/${'R'.repeat(1000)}/10.00`, /at most 1024/],
  ];
  for (const [q, detail] of cases) {
    const res = await qr2(app, q);
    assert.equal(res.status, 400, q);
    const problem = await problemOf(res);
    assert.match(problem.detail ?? '', detail, q);
    assert.equal(problem.errors?.[0]?.pointer, '/q', q);
  }
  const missing = await fetch(`${app.url}/qr2/`);
  assert.equal((await problemOf(missing)).errors?.[0]?.pointer, '/q');
  const twice = await fetch(`${app.url}/qr2/?q=a&q=b`);
  assert.equal((await problemOf(twice)).type, 'https://docs.amil.my/problems/repeated-parameter');
  for (const size of ['64', '2048', 'x']) {
    const res = await qr2(app, `${app.url}/pay/LZS/zakat-fitrah/R1/10.00`, `&size=${size}`);
    assert.equal(res.status, 400, size);
    assert.equal((await problemOf(res)).errors?.[0]?.pointer, '/size');
  }
});

test('with PUBLIC_BASE_URL set, pay links of that origin are the ones rendered', async (t) => {
  const app = await startApp(t, { PUBLIC_BASE_URL: 'https://pay.amil.example.my' });
  const ok = await qr2(app, 'https://pay.amil.example.my/pay/LZS/zakat-fitrah/R1/10.00');
  assert.equal(ok.status, 200);
  assert.equal(
    decodeQrPng(new Uint8Array(await ok.arrayBuffer())).text,
    'https://pay.amil.example.my/pay/LZS/zakat-fitrah/R1/10.00',
  );
  assert.equal((await qr2(app, `${app.url}/pay/LZS/zakat-fitrah/R1/10.00`)).status, 400);
});

test('PNGs are drawn on worker threads: /api/version stays quick while 16 clients ask for distinct 1024 px codes', async (t) => {
  const app = await startApp(t);
  const renders = Array.from({ length: 16 }, (_, i) =>
    qr2(app, `${app.url}/pay/LZS/zakat-fitrah/LOAD-${i}/28.00`, '&size=1024').then(async (res) => {
      await res.arrayBuffer();
      return res.status;
    }),
  );
  // Drawn on the event loop, these 16 codes (tens of ms each) hold every other request for a second or two.
  let done = false;
  const statuses = Promise.all(renders).finally(() => (done = true));
  let slowest = 0;
  let probes = 0;
  while (!done) {
    const started = performance.now();
    assert.equal((await fetch(`${app.url}/api/version`)).status, 200);
    slowest = Math.max(slowest, performance.now() - started);
    probes += 1;
  }
  assert.deepEqual(await statuses, Array(16).fill(200));
  assert.ok(slowest < 600, `slowest /api/version of ${probes} during the renders: ${slowest.toFixed(0)} ms`);
  const stats = app.deps.qr.stats();
  assert.equal(stats.rendered, 16);
  assert.equal(stats.offMainThread, true);
});

test('a code asked for again comes from the cache: no second render', async (t) => {
  const app = await startApp(t);
  const link = `${app.url}/pay/LZS/zakat-fitrah/HOT-1/28.00`;
  const first = new Uint8Array(await (await qr2(app, link, '&size=512')).arrayBuffer());
  const again = new Uint8Array(await (await qr2(app, link, '&size=512')).arrayBuffer());
  assert.deepEqual(again, first);
  assert.equal(decodeQrPng(again).text, link);
  assert.deepEqual(app.deps.qr.stats(), { rendered: 1, cached: 1, offMainThread: true });
});

test('/qr2 without the slash redirects to /qr2/ with its query, and the redirect leads to the QR code', async (t) => {
  const app = await startApp(t);
  const link = `${app.url}/pay/LZS/zakat-fitrah/FITRAH%2042/28.00`;
  const query = `?q=${encodeURIComponent(link)}&size=512`;
  const res = await fetch(`${app.url}/qr2${query}`, { redirect: 'manual' });
  assert.equal(res.status, 301);
  assert.equal(res.headers.get('location'), `/qr2/${query}`);
  const bare = await fetch(`${app.url}/qr2`, { redirect: 'manual' });
  assert.equal(bare.headers.get('location'), '/qr2/', 'no query, none added');

  const followed = await fetch(`${app.url}/qr2${query}`);
  assert.equal(followed.status, 200);
  assert.equal(followed.url, `${app.url}/qr2/${query}`);
  assert.deepEqual(decodeQrPng(new Uint8Array(await followed.arrayBuffer())), {
    text: link,
    width: 512,
    height: 512,
  });
});
