import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parsePayLinkPath,
  payLinkFieldProblem,
  payLinkSignatureMatches,
  readPayLinkQuery,
  signedPayLinkUrl,
  type PayLink,
} from '../../core/payments/pay-link.ts';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const LINK: PayLink = {
  agency: 'LZS',
  paymentCategory: 'zakat-fitrah',
  refNo: 'FITRAH 2026/42',
  amount: '28.00',
  extras: { household: 'A-7', name: 'Siti & Ali' },
  uses: 'once',
};

/** The link a URL names, as the pay page reads it back. */
function readBack(url: string): { link: PayLink; signature: string } {
  const parsed = new URL(url);
  const fields = parsePayLinkPath(parsed.pathname);
  const query = readPayLinkQuery(parsed.searchParams);
  assert.ok(fields && 'signed' in query && query.signed, url);
  return { link: { ...fields, extras: query.extras, uses: query.uses }, signature: query.signature };
}

test('a signed pay link has a stable form: path, extras sorted as x.<key>, then a 32-hex sig', () => {
  // Printed posters must keep verifying across releases: this vector pins the message and the encoding.
  // Checked independently: printf 'amil-pay-link-v1\nagency=LZS&amount=28.00&paymentCategory=zakat-fitrah&
  // refNo=FITRAH%202026%2F42&x.household=A-7&x.name=Siti%20%26%20Ali' | openssl dgst -sha256 -hmac <SECRET>
  assert.equal(
    signedPayLinkUrl('https://pay.amil.example.my', SECRET, LINK),
    'https://pay.amil.example.my/pay/LZS/zakat-fitrah/FITRAH%202026%2F42/28.00' +
      '?x.household=A-7&x.name=Siti%20%26%20Ali&sig=8e9448628d0b64d87f966ec44b7725e8',
  );
});

test('the signature verifies the link it was made for, and nothing else', () => {
  const { link, signature } = readBack(signedPayLinkUrl('https://pay.amil.example.my', SECRET, LINK));
  assert.deepEqual(link, LINK);
  assert.equal(payLinkSignatureMatches(SECRET, link, signature), true);
  const changed: PayLink[] = [
    { ...LINK, agency: 'PPZ' },
    { ...LINK, paymentCategory: 'zakat-pendapatan' },
    { ...LINK, refNo: 'FITRAH 2026/43' },
    { ...LINK, amount: '2.80' },
    { ...LINK, extras: { ...LINK.extras, household: 'A-8' } },
    { ...LINK, extras: { household: 'A-7' } },
    { ...LINK, extras: { ...LINK.extras, extra: 'added' } },
    { ...LINK, extras: {} },
  ];
  for (const other of changed) {
    assert.equal(payLinkSignatureMatches(SECRET, other, signature), false, JSON.stringify(other));
  }
  assert.equal(payLinkSignatureMatches(`${SECRET}2`, link, signature), false, 'another secret');
  assert.equal(payLinkSignatureMatches(SECRET, link, signature.toUpperCase()), false);
  assert.equal(payLinkSignatureMatches(SECRET, link, signature.slice(0, 16)), false, 'truncated');
});

test('a pay link query: without sig it is unsigned and ignored; with sig, repeats and bad extras are malformed', () => {
  const read = (query: string) => readPayLinkQuery(new URLSearchParams(query));
  assert.deepEqual(read('x.a=1&utm_source=wa'), { signed: false });
  assert.deepEqual(read('x.a=1&utm_source=wa&sig=abc'), {
    signed: true,
    signature: 'abc',
    extras: { a: '1' },
    uses: 'once',
  });
  assert.ok('malformed' in read('sig=a&sig=b'));
  assert.ok('malformed' in read('x.a=1&x.a=2&sig=a'));
  assert.ok('malformed' in read('x.a-b=1&sig=a'), 'key pattern');
  assert.ok('malformed' in read('x.a=%7E&sig=a'), 'no ~ in values');
  assert.ok('malformed' in read(`x.a=${'v'.repeat(65)}&sig=a`), 'at most 64 characters');
  assert.ok('malformed' in read(`${Array.from({ length: 11 }, (_, i) => `x.k${i}=v`).join('&')}&sig=a`));
});

test('a pay link query with x.__proto__, x.constructor or x.prototype is malformed and says which, signed or not', () => {
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    for (const query of [`x.a=1&x.${name}=v&sig=abc`, `x.${name}=v`]) {
      const read = readPayLinkQuery(new URLSearchParams(query));
      assert.ok(
        'malformed' in read && read.malformed.includes(`x.${name}`),
        `${query}: ${JSON.stringify(read)}`,
      );
    }
  }
});

test('a pay link path decodes each segment; anything else is not a pay link', () => {
  assert.deepEqual(parsePayLinkPath('/pay/LZS/zakat-fitrah/INV%2042%2F1/10.00'), {
    agency: 'LZS',
    paymentCategory: 'zakat-fitrah',
    refNo: 'INV 42/1',
    amount: '10.00',
  });
  for (const path of [
    '/pay/LZS/zakat-fitrah/INV/10.00/x',
    '/pay/LZS/INV/10.00',
    '/v2/checkout',
    '/pay/%E0/a/b/1.00',
  ]) {
    assert.equal(parsePayLinkPath(path), undefined, path);
  }
  const fields = { agency: 'LZS', paymentCategory: 'zakat-fitrah', refNo: 'R1', amount: '1.00' };
  assert.equal(payLinkFieldProblem(fields), undefined);
  assert.match(payLinkFieldProblem({ ...fields, amount: '0.99' }) ?? '', /at least 1\.00/);
  assert.match(payLinkFieldProblem({ ...fields, amount: '10' }) ?? '', /two decimals/);
  assert.match(payLinkFieldProblem({ ...fields, refNo: 'R~1' }) ?? '', /without ~/);
});
