import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc16CcittFalse, tlv, TlvOverflowError, withCrc } from '../../reports/qr/emv.ts';
import { buildDuitNowPayload, DUITNOW_AID, type DuitNowInput } from '../../reports/qr/duitnow.ts';
import { QR_SIZE, QrTooDenseError, renderQrPng } from '../../core/qr/png.ts';
import { decodeQrPng, parseTlv } from '../support/qr.ts';

// PayNet, "DuitNow QR > QR generation specification > Merchant-presented mode > Examples" (V1.5),
// https://docs.developer.paynet.my/docs/duitNow-QR/integration/QR-generation-specification/merchant-presented-mode/example
// Example 1 (retail POS, Affin Bank, RM 10.00) and example 2 (P2P): each published with its CRC.
const PAYNET_EXAMPLE_1 =
  '00020201021126410014A000000615000101065016640209123456789520499995303458540510.005802MY5909QRCSDNBHD6005BANGI6304343F';
const PAYNET_EXAMPLE_2 =
  '00020201021126410014A000000615000101065016640209123456789520400005303458540510.005802MY5909AUSERNAME6005BANGI63043A23';

const LZS: DuitNowInput = {
  acquirerId: '890053',
  merchantId: 'LZS0000001',
  categoryCode: '8661',
  amount: '28.00',
  name: 'LEMBAGA ZAKAT SELANGOR',
  city: 'SHAH ALAM',
  refNo: 'FITRAH-2026-0042',
};

test('the CRC is CRC-16/CCITT-FALSE: the published DuitNow examples and the catalogue check value', () => {
  for (const example of [PAYNET_EXAMPLE_1, PAYNET_EXAMPLE_2]) {
    assert.equal(crc16CcittFalse(example.slice(0, -4)), example.slice(-4), example);
    assert.equal(withCrc(example.slice(0, -8)), example, 'the CRC covers its own "6304"');
  }
  // The check value of CRC-16/CCITT-FALSE (reveng catalogue: CRC-16/IBM-3740) over "123456789".
  assert.equal(crc16CcittFalse('123456789'), '29B1');
  assert.equal(crc16CcittFalse(''), 'FFFF');
});

test('a DuitNow payload parses back into the data objects of the issue, each length as written', () => {
  const built = buildDuitNowPayload(LZS);
  assert.ok('payload' in built, JSON.stringify(built));
  const objects = parseTlv(built.payload);
  assert.deepEqual(
    objects.map((o) => o.id),
    ['00', '01', '26', '52', '53', '54', '58', '59', '60', '62', '63'],
  );
  const value = (id: string) => objects.find((o) => o.id === id)?.value;
  assert.equal(value('00'), '02', 'DuitNow payload format version 02, as in the PayNet examples');
  assert.equal(value('01'), '12', 'dynamic: it carries an amount');
  assert.deepEqual(parseTlv(value('26') ?? ''), [
    { id: '00', length: 14, value: DUITNOW_AID },
    { id: '01', length: 6, value: '890053' },
    { id: '02', length: 10, value: 'LZS0000001' },
  ]);
  assert.equal(value('52'), '8661');
  assert.equal(value('53'), '458');
  assert.equal(value('54'), '28.00');
  assert.equal(value('58'), 'MY');
  assert.equal(value('59'), 'LEMBAGA ZAKAT SELANGOR');
  assert.equal(value('60'), 'SHAH ALAM');
  assert.deepEqual(parseTlv(value('62') ?? ''), [{ id: '01', length: 16, value: 'FITRAH-2026-0042' }]);
  assert.equal(objects.at(-1)?.length, 4);
  assert.equal(value('63'), crc16CcittFalse(built.payload.slice(0, -4)));
  assert.match(value('63') ?? '', /^[0-9A-F]{4}$/);
  for (const o of objects) assert.ok(o.length <= 99 && o.length === o.value.length, o.id);
});

test('values that would overflow their data object are refused, never cut', () => {
  const cases: [Partial<DuitNowInput>, keyof DuitNowInput, RegExp][] = [
    [{ name: 'N'.repeat(26) }, 'name', /is 26 characters; the merchant name \(ID 59\) holds at most 25/],
    [{ city: 'C'.repeat(16) }, 'city', /holds at most 15/],
    [{ refNo: 'R'.repeat(26) }, 'refNo', /the bill number \(ID 62, sub-object 01\) holds at most 25/],
    [
      { amount: '12345678901.00' },
      'amount',
      /is 14 characters; the transaction amount \(ID 54\) holds at most 13/,
    ],
    [{ categoryCode: '866' }, 'categoryCode', /4 digits/],
    [{ merchantId: 'M'.repeat(60), acquirerId: 'A'.repeat(30) }, 'merchantId', /ID 26\) would be 116/],
    [{ name: 'MASJID JAMEK ÉCOLE' }, 'name', /printable ASCII/],
    [{ city: '' }, 'city', /1 to 15 printable ASCII/],
  ];
  for (const [change, field, message] of cases) {
    const built = buildDuitNowPayload({ ...LZS, ...change });
    assert.ok('problems' in built, field);
    assert.equal(built.problems[0]?.field, field);
    assert.match(built.problems[0]?.message ?? '', message);
  }
  assert.ok('payload' in buildDuitNowPayload({ ...LZS, name: 'N'.repeat(25), city: 'C'.repeat(15) }));
  assert.equal(tlv('59', 'X'.repeat(99)).slice(0, 4), '5999');
  assert.throws(() => tlv('59', 'X'.repeat(100)), TlvOverflowError);
});

test('a QR PNG is exactly the size asked, and decodes back to its text with a real QR decoder', () => {
  const texts = [
    PAYNET_EXAMPLE_1,
    'http://127.0.0.1:3000/pay/LZS/zakat-fitrah/FITRAH%2042/28.00?x.household=A-7&sig=0123456789abcdef0123456789abcdef',
  ];
  for (const text of texts) {
    for (const size of [QR_SIZE.min, QR_SIZE.default, QR_SIZE.max]) {
      const png = renderQrPng(text, size);
      assert.deepEqual(decodeQrPng(png), { text, width: size, height: size }, `${size}: ${text}`);
      assert.equal(png[25], 0, 'greyscale (IHDR colour type 0)');
    }
  }
  assert.throws(() => renderQrPng('x'.repeat(1000), QR_SIZE.min), QrTooDenseError);
});
