/**
 * The QR generators (spec 1, 2.2, 4.2, 5.2): signed and DuitNow, end to end over HTTP as a merchant uses
 * them (signed with the merchant toolkit), every PNG decoded back with a real QR decoder.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fixedClock } from '../../core/clock.ts';
import { signPost } from '../../core/signatures.ts';
import { orderAt, problemOf, startApp, type TestApp } from '../helpers.ts';
import { appDb } from '../support/app-db.ts';
import { LZS_KEY } from '../support/merchant.ts';
import { paymentCount } from '../support/orders.ts';
import { decodeQrPng, parseTlv } from '../support/qr.ts';
import { crc16CcittFalse } from '../../reports/qr/emv.ts';

const PPZ_KEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const QR = '/api/qrcode/v1/generator';
const DUITNOW = '/api/duitnowqr/v1/generator';
const PROBLEM = 'https://docs.amil.my/problems/';

interface QrJson {
  pngUrl: string;
  payUrl: string;
  expiresAt: string;
}
interface DuitNowJson {
  pngUrl: string;
  payload: string;
  expiresAt: string;
}

const fields = (overrides: Record<string, string> = {}) => ({
  agency: 'LZS',
  paymentCategory: 'zakat-fitrah',
  refNo: 'FITRAH-2026-0042',
  amount: '28.00',
  ...overrides,
});

/** POSTs the fields, signed with the merchant toolkit (5.3, POST rule) unless told otherwise. */
function generate(
  app: TestApp,
  path: string,
  params: Record<string, string>,
  options: { key?: string; now?: Date; body?: (signed: string) => string } = {},
): Promise<Response> {
  const { body } = signPost(params, options.key ?? LZS_KEY, options.now ?? app.deps.clock.now());
  return fetch(`${app.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: options.body ? options.body(body) : body,
  });
}

/** Rows in qr_codes, read over a connection of its own. */
async function storedCodes(t: TestContext, app: TestApp): Promise<number> {
  const [row] = await appDb(t, app).rows<{ n: number }>('SELECT count(*) AS n FROM qr_codes');
  return row?.n ?? -1;
}

test('the signed generator answers with a PNG URL whose QR code is the signed pay link, which opens the pay page at the right amount', async (t) => {
  const app = await startApp(t);
  const res = await generate(app, QR, {
    ...fields(),
    'extras[household]': 'A-7',
    'extras[dependants]': '4',
  });
  assert.equal(res.status, 201);
  const body = (await res.json()) as QrJson;
  assert.equal(res.headers.get('location'), body.pngUrl);
  assert.match(body.pngUrl, new RegExp(`^${app.url}/api/qrcode/v1/png/[A-Za-z0-9_-]{22}\\.png$`));
  assert.equal(
    body.payUrl.replace(/sig=[0-9a-f]{32}$/, 'sig=*'),
    `${app.url}/pay/LZS/zakat-fitrah/FITRAH-2026-0042/28.00?x.dependants=4&x.household=A-7&sig=*`,
  );
  const days = (Date.parse(body.expiresAt) - Date.now()) / 86_400_000;
  assert.ok(days > 89.9 && days <= 90, `expires in 90 days (${days})`);

  const png = await fetch(body.pngUrl);
  assert.equal(png.status, 200);
  assert.equal(png.headers.get('content-type'), 'image/png');
  assert.match(png.headers.get('cache-control') ?? '', /^public, max-age=77\d{5}, immutable$/);
  const decoded = decodeQrPng(new Uint8Array(await png.arrayBuffer()));
  assert.deepEqual(decoded, { text: body.payUrl, width: 256, height: 256 });

  // The payer scans it and lands on the pay page with the amount, then pays into an order with the extras.
  const page = await fetch(decoded.text, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /<dd>RM 28\.00<\/dd>/);
  assert.match(html, /<dd>FITRAH-2026-0042<\/dd>/);
  const action = (/<form method="post" action="([^"]+)"/.exec(html)?.[1] ?? '').replace(/&amp;/g, '&');
  const opened = await fetch(new URL(action, app.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: 'email=siti%40example.my',
    redirect: 'manual',
  });
  assert.equal(opened.status, 303);
  const order = await orderAt(app, opened);
  assert.equal(order?.amountSen, 2800);
  assert.equal(order?.paymentCategory, 'zakat-fitrah');
  assert.deepEqual(JSON.parse(order?.extras ?? 'null'), { dependants: '4', household: 'A-7' });
});

test('a pay URL from the signed generator with its amount, refNo, category or extras edited is refused by the pay page, and nothing is stored', async (t) => {
  const app = await startApp(t);
  const { payUrl } = (await (
    await generate(app, QR, { ...fields(), 'extras[household]': 'A-7' })
  ).json()) as QrJson;
  const edits = [
    payUrl.replace('/28.00?', '/1.00?'),
    payUrl.replace('/FITRAH-2026-0042/', '/FITRAH-2026-0043/'),
    payUrl.replace('/zakat-fitrah/', '/zakat-pendapatan/'),
    payUrl.replace('x.household=A-7', 'x.household=B-1'),
    payUrl.replace('x.household=A-7&', ''),
  ];
  for (const edited of edits) {
    assert.notEqual(edited, payUrl);
    const page = await fetch(edited, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 403, edited);
    const post = await fetch(edited, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: 'email=siti%40example.my',
    });
    assert.equal((await problemOf(post)).type, `${PROBLEM}pay-link-tampered`);
  }
  assert.equal(await paymentCount(app.deps.store), 0);
});

test('a generator request that was tampered with, expired, or signed with another agency key is 401, and nothing is stored', async (t) => {
  const app = await startApp(t);
  const cases: [string, Promise<Response>, string][] = [
    [
      'amount changed after signing',
      generate(app, QR, fields(), { body: (b) => b.replace('amount=28.00', 'amount=2.80') }),
      'signature-mismatch',
    ],
    [
      'an extra added after signing',
      generate(app, QR, fields(), { body: (b) => `${b}&extras%5Bnote%5D=x` }),
      'signature-mismatch',
    ],
    [
      'signed two minutes ago',
      generate(app, QR, fields(), { now: new Date(Date.now() - 120_000) }),
      'exp-expired',
    ],
    ['signed with PPZ key for LZS', generate(app, QR, fields(), { key: PPZ_KEY }), 'signature-mismatch'],
    ['DuitNow, PPZ key for LZS', generate(app, DUITNOW, fields(), { key: PPZ_KEY }), 'signature-mismatch'],
    ['an agency that does not exist', generate(app, QR, fields({ agency: 'NOPE' })), 'signature-mismatch'],
    [
      'not signed at all',
      generate(app, QR, fields(), { body: () => new URLSearchParams(fields()).toString() }),
      'exp-missing',
    ],
    [
      'not signed, an agency that does not exist (answered as for one that does)',
      generate(app, QR, fields(), { body: () => new URLSearchParams(fields({ agency: 'NOPE' })).toString() }),
      'exp-missing',
    ],
    ['no agency', generate(app, QR, fields(), { body: (b) => b.replace('agency=LZS&', '') }), 'unauthorized'],
  ];
  for (const [what, pending, type] of cases) {
    const res = await pending;
    assert.equal(res.status, 401, what);
    assert.equal((await problemOf(res)).type, `${PROBLEM}${type}`, what);
  }
  assert.equal(await storedCodes(t, app), 0);
});

test('the request is checked field by field (422 with pointers) after its signature', async (t) => {
  const app = await startApp(t);
  const cases: [Record<string, string>, string, RegExp][] = [
    [fields({ refNo: 'INV~1' }), '/refNo', /without ~/],
    [fields({ refNo: 'INVÉ' }), '/refNo', /printable ASCII/],
    [fields({ amount: '0.99' }), '/amount', /at least 1\.00/],
    [fields({ amount: '10' }), '/amount', /two decimals/],
    [fields({ amount: '30000.01' }), '/amount', /at most 30000\.00/],
    [fields({ paymentCategory: 'zakat-simpanan' }), '/paymentCategory', /not a payment category of LZS/],
    [{ ...fields(), 'extras[bad-key]': 'v' }, '/extras/bad-key', /letters, digits or _/],
    [{ ...fields(), 'extras[note]': 'a~b' }, '/extras/note', /without ~/],
    [{ ...fields(), 'extras[note]': 'n'.repeat(65) }, '/extras/note', /1 to 64/],
    [
      { ...fields(), ...Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`extras[k${i}]`, 'v'])) },
      '/extras',
      /at most 10 keys/,
    ],
    [{ ...fields(), extras: 'a=b' }, '/extras', /must be object/],
    [{ ...fields(), colour: 'red' }, '/colour', /not an allowed property/],
  ];
  for (const [params, pointer, message] of cases) {
    const res = await generate(app, QR, params);
    assert.equal(res.status, 422, pointer);
    const problem = await problemOf(res);
    const error = problem.errors?.find((e) => e.pointer === pointer);
    assert.ok(error, `${pointer} in ${JSON.stringify(problem.errors)}`);
    assert.match(error.message, message, pointer);
  }
  const long = await generate(app, QR, {
    ...fields({ refNo: 'R'.repeat(255) }),
    ...Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`extras[k${i}]`, '%'.repeat(64)])),
  });
  assert.equal(long.status, 422);
  assert.match((await problemOf(long)).errors?.[0]?.message ?? '', /pay link would be \d+ characters/);

  const json = await fetch(`${app.url}${QR}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(fields()),
  });
  assert.equal(json.status, 415);
  assert.equal(await storedCodes(t, app), 0);
});

test('reserved names are refused, never dropped: a form field __proto__ (400) and extras[__proto__], extras[constructor], extras[prototype] (422)', async (t) => {
  const app = await startApp(t);
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    const field = await generate(app, QR, { ...fields(), [name]: 'x' });
    assert.equal(field.status, 400, name);
    assert.deepEqual(
      (await problemOf(field)).errors?.map((e) => e.pointer),
      [`/${name}`],
      name,
    );
    const extra = await generate(app, QR, {
      ...fields(),
      'extras[household]': 'A-7',
      [`extras[${name}]`]: 'x',
    });
    assert.equal(extra.status, 422, `extras[${name}]`);
    const problem = await problemOf(extra);
    assert.ok(
      problem.errors?.some((e) => e.pointer === `/extras/${name}` && /reserved/.test(e.message)),
      JSON.stringify(problem.errors),
    );
  }
  assert.equal(await storedCodes(t, app), 0);
});

test('the DuitNow generator answers with the payload and a PNG of it: the data objects of the issue, with a valid CRC', async (t) => {
  const app = await startApp(t);
  const res = await generate(app, DUITNOW, fields({ amount: '10.00' }));
  assert.equal(res.status, 201);
  const body = (await res.json()) as DuitNowJson;
  assert.match(body.pngUrl, /\/api\/qrcode\/v1\/png\/[A-Za-z0-9_-]{22}\.png$/);
  const png = await fetch(`${body.pngUrl}?size=512`);
  assert.equal(png.status, 200);
  assert.deepEqual(decodeQrPng(new Uint8Array(await png.arrayBuffer())), {
    text: body.payload,
    width: 512,
    height: 512,
  });
  const objects = parseTlv(body.payload);
  const value = (id: string) => objects.find((o) => o.id === id)?.value ?? '';
  assert.equal(value('01'), '12');
  assert.deepEqual(
    parseTlv(value('26')).map((o) => o.value),
    ['A0000006150001', '890053', 'LZS0000001'],
  );
  assert.equal(value('52'), '8661');
  assert.equal(value('53'), '458');
  assert.equal(value('54'), '10.00');
  assert.equal(value('58'), 'MY');
  assert.equal(value('59'), 'LEMBAGA ZAKAT SELANGOR');
  assert.equal(value('60'), 'SHAH ALAM');
  assert.deepEqual(parseTlv(value('62')), [{ id: '01', length: 16, value: 'FITRAH-2026-0042' }]);
  assert.equal(objects.at(-1)?.id, '63');
  assert.equal(value('63'), crc16CcittFalse(body.payload.slice(0, -4)));
});

test('DuitNow refuses what does not fit (422), extras (422), and an agency without DuitNow settings (409)', async (t) => {
  const app = await startApp(t);
  const refNo = await problemOf(await generate(app, DUITNOW, fields({ refNo: 'R'.repeat(26) })));
  assert.equal(refNo.status, 422);
  assert.deepEqual(
    refNo.errors?.map((e) => e.pointer),
    ['/refNo'],
  );
  assert.match(
    refNo.errors?.[0]?.message ?? '',
    /is 26 characters; the bill number \(ID 62, sub-object 01\) holds at most 25/,
  );

  const extras = await problemOf(await generate(app, DUITNOW, { ...fields(), 'extras[note]': 'x' }));
  assert.equal(extras.errors?.[0]?.pointer, '/extras');

  const { settings } = (await app.deps.store.agencies.get('LZS')) ?? { settings: undefined };
  assert.ok(settings);
  await app.deps.store.agencies.update('LZS', {
    settings: { duitnow: { ...settings.duitnow, name: 'LEMBAGA ZAKAT NEGERI SELANGOR' } },
  });
  const name = await problemOf(await generate(app, DUITNOW, fields()));
  assert.equal(name.status, 422);
  assert.equal(name.errors?.[0]?.pointer, '/agency');
  assert.match(
    name.errors?.[0]?.message ?? '',
    /DuitNow name is 29 characters; the merchant name \(ID 59\) holds at most 25/,
  );

  await app.deps.store.agencies.update('LZS', { settings: { duitnow: {} } });
  const unset = await problemOf(await generate(app, DUITNOW, fields()));
  assert.equal(unset.status, 409);
  assert.equal(unset.type, `${PROBLEM}duitnow-not-configured`);
  assert.match(unset.detail ?? '', /no DuitNow acquirerId, merchantId, name, city/);
  assert.equal(await storedCodes(t, app), 0);
});

test('PNG URLs: unknown token 404, past its lifetime 410, size within 128 to 1024, revalidation 304', async (t) => {
  const clock = fixedClock('2026-11-20T02:00:00.000Z');
  const app = await startApp(t, { QR_PNG_TTL_DAYS: '7' }, { clock });
  const { pngUrl, expiresAt } = (await (await generate(app, QR, fields())).json()) as QrJson;
  assert.equal(expiresAt, '2026-11-27T02:00:00.000Z');

  for (const unknown of ['AAAAAAAAAAAAAAAAAAAAAA.png', 'short.png', '..%2F..%2Fetc.png']) {
    const res = await fetch(`${app.url}/api/qrcode/v1/png/${unknown}`);
    assert.equal(res.status, 404, unknown);
  }
  for (const size of ['127', '1025', 'big', '256.5']) {
    const res = await fetch(`${pngUrl}?size=${size}`);
    assert.equal(res.status, 400, size);
    assert.equal((await problemOf(res)).errors?.[0]?.pointer, '/size');
  }
  const sized = await fetch(`${pngUrl}?size=128`);
  assert.equal(decodeQrPng(new Uint8Array(await sized.arrayBuffer())).width, 128);

  const first = await fetch(pngUrl);
  const etag = first.headers.get('etag') ?? '';
  assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
  assert.equal(first.headers.get('cache-control'), `public, max-age=${7 * 86_400}, immutable`);
  // As a browser revalidates (fetch alone would add Cache-Control: no-cache to a conditional request).
  const again = await fetch(pngUrl, { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
  assert.equal(again.status, 304);

  clock.set('2026-11-27T01:59:59.000Z');
  const last = await fetch(pngUrl);
  assert.equal(last.status, 200);
  assert.equal(last.headers.get('cache-control'), 'public, max-age=1, immutable');
  clock.set('2026-11-27T02:00:00.000Z');
  const gone = await fetch(pngUrl);
  assert.equal(gone.status, 410);
  assert.equal((await problemOf(gone)).type, `${PROBLEM}qr-expired`);
});
