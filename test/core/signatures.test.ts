import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import {
  apiKeyBytes,
  canonicalQuery,
  decodedKeysKept,
  DECODED_KEYS_KEPT,
  encodeForm,
  encodeRfc3986,
  signCallback,
  signedCallbackBody,
  signGet,
  signMessage,
  signPost,
  signaturesEqual,
  verifyCallback,
  verifySignedRequest,
} from '../../core/signatures.ts';
import { REPO_ROOT } from '../helpers.ts';

const KEY = 'c3b5a0e2-7f1d-4c8e-9a6b-2d4f8e1a3b5c';
const OTHER_KEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const NOW = new Date('2026-11-20T02:00:00Z');

interface Vector {
  kind: 'GET' | 'POST' | 'callback';
  path?: string;
  params: Record<string, string>;
  message: string;
  signature: string;
}

test('every test vector in docs/signatures.md holds, computed independently and by the toolkit', () => {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs/signatures.md'), 'utf8');
  const json = /<!-- vectors: (.+) -->/.exec(doc)?.[1];
  assert.ok(json);
  const { apiKey, vectors } = JSON.parse(json) as { apiKey: string; vectors: Vector[] };
  assert.equal(vectors.length, 3);
  for (const v of vectors) {
    const encode = v.kind === 'callback' ? encodeForm : encodeRfc3986;
    const query = canonicalQuery(v.params, encode);
    assert.equal(v.kind === 'GET' ? `${v.path}?${query}` : query, v.message, v.kind);
    // Independently: HMAC over the message with the 16 raw key bytes, first 16 hex characters.
    const raw = Buffer.from(apiKey.replace(/-/g, ''), 'hex');
    assert.equal(raw.length, 16);
    assert.equal(createHmac('sha256', raw).update(v.message).digest('hex').slice(0, 16), v.signature, v.kind);
    assert.equal(signMessage(v.message, apiKey), v.signature);
    assert.notEqual(
      createHmac('sha256', apiKey).update(v.message).digest('hex').slice(0, 16),
      v.signature,
      'not the ASCII key',
    );
  }
});

test('RFC 3986 keeps only the unreserved characters; form style is URLSearchParams', () => {
  assert.equal(encodeRfc3986("a b~*'+!()é/"), 'a%20b~%2A%27%2B%21%28%29%C3%A9%2F');
  assert.equal(encodeForm("a b~*'+!()é/"), 'a+b%7E*%27%2B%21%28%29%C3%A9%2F');
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme' }), (value) => {
      assert.match(encodeRfc3986(value), /^([A-Za-z0-9\-._~]|%[0-9A-F]{2})*$/);
      assert.equal(decodeURIComponent(encodeRfc3986(value)), value);
      assert.equal(new URLSearchParams(`x=${encodeForm(value)}`).get('x'), value);
    }),
  );
});

test('a callback is signed over its form-style canonical query, whatever its fields hold', () => {
  // signCallback serialises the sorted fields once; the message is still each pair in encodeForm, joined.
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), { maxKeys: 12 }),
      (fields) => {
        const message = canonicalQuery(fields, encodeForm);
        assert.equal(signCallback(fields, KEY), signMessage(message, KEY), message);
      },
    ),
  );
  // `signature` is never signed; a field holding an empty string is.
  const fields = { b: 'x y', a: '', signature: 'ignored', 'é~': '*+' };
  assert.equal(signCallback(fields, KEY), signMessage('a=&b=x+y&%C3%A9%7E=*%2B', KEY));
});

test('a signed callback body holds each field once, sorted, then its signature, and verifies', () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), { maxKeys: 12 }),
      (fields) => {
        const body = signedCallbackBody(fields, KEY);
        const sorted = Object.keys(fields)
          .filter((key) => key !== 'signature')
          .sort()
          .map((key) => [key, fields[key]]);
        const form = new URLSearchParams(body);
        assert.deepEqual([...form.entries()], [...sorted, ['signature', signCallback(fields, KEY)]], body);
        assert.ok(verifyCallback(form, KEY), body);
      },
    ),
  );
  assert.equal(signedCallbackBody({}, KEY), `signature=${signMessage('', KEY)}`);
});

test('a signed GET verifies, and each kind of bad request is refused with its own reason', () => {
  const url = signGet('/api/report/v1/payment', { agency: 'LZS', q: "a b*'~+" }, KEY, NOW);
  const parsed = new URL(url, 'http://x');
  const entries = [...parsed.searchParams.entries()];
  const verify = (e: (readonly [string, string])[], at = NOW, key = KEY, p = parsed.pathname) =>
    verifySignedRequest({ method: 'GET', path: p, entries: e, apiKey: key, now: at });

  assert.equal(verify(entries), undefined);
  assert.equal(verify(entries, new Date(NOW.getTime() + 64_000)), undefined, 'within the 5 s skew');
  assert.equal(verify(entries, new Date(NOW.getTime() + 66_000)), 'exp-expired');
  assert.equal(verify(entries, NOW, OTHER_KEY), 'signature-mismatch', "another agency's key");
  assert.equal(verify(entries, NOW, KEY, '/api/report/v1/other'), 'signature-mismatch', 'the path is signed');
  const swap = (key: string, value: string) => entries.map(([k, v]) => [k, k === key ? value : v] as const);
  assert.equal(verify(swap('agency', 'PPZ')), 'signature-mismatch');
  assert.equal(verify(entries.filter(([k]) => k !== 'signature')), 'signature-missing');
  assert.equal(verify(entries.filter(([k]) => k !== 'exp')), 'exp-missing');
  assert.equal(verify(swap('exp', '17950000.5')), 'exp-malformed');
  assert.equal(verify(swap('exp', String(NOW.getTime() / 1000 + 66))), 'exp-too-far-ahead');
  assert.equal(verify([...entries, ['agency', 'PPZ']]), 'repeated-parameter');
});

test('a signed POST verifies over its fields without the path', () => {
  const { fields, body } = signPost({ agency: 'LZS', refNo: 'REF 1', amount: '10.00' }, KEY, NOW);
  assert.match(fields.signature ?? '', /^[0-9a-f]{16}$/);
  const entries = [...new URLSearchParams(body).entries()];
  assert.equal(
    verifySignedRequest({ method: 'POST', path: '/any', entries, apiKey: KEY, now: NOW }),
    undefined,
  );
});

test('verifyCallback accepts a genuine callback and refuses tampered, unsigned or repeated fields', () => {
  const fields = {
    status: 'success',
    orderNo: 'AM1',
    refNo: 'R 1',
    amount: '10.50',
    extraData: "a~b*c'd+e f",
  };
  const form = new URLSearchParams({ ...fields, signature: signCallback(fields, KEY) });
  assert.equal(verifyCallback(form, KEY), true);
  assert.equal(verifyCallback(new URLSearchParams(form.toString()), KEY), true, 'after a trip over the wire');
  assert.equal(verifyCallback(form, OTHER_KEY), false);
  const tampered = new URLSearchParams(form);
  tampered.set('amount', '100.50');
  assert.equal(verifyCallback(tampered, KEY), false);
  const unsigned = new URLSearchParams(form);
  unsigned.delete('signature');
  assert.equal(verifyCallback(unsigned, KEY), false);
  const repeated = new URLSearchParams(form);
  repeated.append('status', 'failed');
  assert.equal(verifyCallback(repeated, KEY), false);
});

test('a __proto__ field added to a signed request or callback breaks the signature instead of vanishing', () => {
  const key = KEY;
  const now = NOW;
  const url = new URL(signGet('/api/report/v1/payment', { agency: 'LZS' }, key, now), 'http://x');
  const entries = [...url.searchParams.entries()];
  const verify = (list: [string, string][]) =>
    verifySignedRequest({ method: 'GET', path: url.pathname, entries: list, apiKey: key, now });
  assert.equal(verify(entries), undefined);
  assert.equal(verify([...entries, ['__proto__', 'x']]), 'signature-mismatch');

  const fields = { status: 'success', amount: '10.00' };
  const form = new URLSearchParams({ ...fields, signature: signCallback(fields, key) });
  assert.equal(verifyCallback(form, key), true);
  form.append('__proto__', 'x');
  assert.equal(verifyCallback(form, key), false);
});

test('a signature in upper-case hex (what .NET Convert.ToHexString writes) is accepted on requests and callbacks', () => {
  const url = new URL(signGet('/api/report/v1/payment', { agency: 'LZS' }, KEY, NOW), 'http://x');
  const upper = [...url.searchParams.entries()].map(
    ([k, v]) => [k, k === 'signature' ? v.toUpperCase() : v] as const,
  );
  assert.match(url.searchParams.get('signature') ?? '', /[a-f]/, 'the vector has letters to change case');
  const verify = (entries: (readonly [string, string])[]) =>
    verifySignedRequest({ method: 'GET', path: url.pathname, entries, apiKey: KEY, now: NOW });
  assert.equal(verify(upper), undefined);
  const wrong = upper.map(([k, v]) => [k, k === 'signature' ? `${v.slice(0, 15)}G` : v] as const);
  assert.equal(verify(wrong), 'signature-mismatch', 'hex digits only, in either case');

  const fields = { status: 'success', orderNo: 'AM1', extraData: 'a~b' };
  const signature = signCallback(fields, KEY);
  assert.match(signature, /[a-f]/);
  assert.equal(verifyCallback({ ...fields, signature: signature.toUpperCase() }, KEY), true);
  assert.equal(
    verifyCallback({ ...fields, signature: signature.toUpperCase(), status: 'failed' }, KEY),
    false,
  );
});

/** The signature computed here from the spec's rule, with nothing of the toolkit's (its cache included). */
const independently = (message: string, key: string) =>
  createHmac('sha256', Buffer.from(key.replace(/-/g, ''), 'hex'))
    .update(message)
    .digest('hex')
    .slice(0, 16);

test('a replaced API key verifies the next request with the new key at once, and refuses the old key', () => {
  const post = (key: string) => [
    ...new URLSearchParams(signPost({ agency: 'LZS' }, key, NOW).body).entries(),
  ];
  const verify = (entries: [string, string][], key: string) =>
    verifySignedRequest({ method: 'POST', path: '/v2/checkout', entries, apiKey: key, now: NOW });
  const signedWithOld = post(KEY);
  assert.equal(verify(signedWithOld, KEY), undefined, 'the old key, used (and so decoded) once');
  // The agency's key replaced: the very next request is checked against the new key.
  assert.equal(verify(signedWithOld, OTHER_KEY), 'signature-mismatch');
  assert.equal(verify(post(OTHER_KEY), OTHER_KEY), undefined);
  assert.equal(signMessage('m', OTHER_KEY), independently('m', OTHER_KEY));
});

test('the decoded keys kept stay bounded, and each key signs as the spec says however many came before', () => {
  const keyOf = (i: number) => `${i.toString(16).padStart(8, '0')}-7f1d-4c8e-9a6b-2d4f8e1a3b5c`;
  for (let i = 0; i < DECODED_KEYS_KEPT + 100; i += 1) {
    assert.equal(signMessage(`message ${i}`, keyOf(i)), independently(`message ${i}`, keyOf(i)));
  }
  assert.ok(decodedKeysKept() <= DECODED_KEYS_KEPT, `${decodedKeysKept()} keys kept`);
  // The first keys left the cache; decoded afresh, they still sign the same.
  assert.equal(signMessage('again', keyOf(0)), independently('again', keyOf(0)));
  assert.throws(() => signMessage('m', 'not-a-key'), /an API key is a UUID/);
  assert.throws(() => signMessage('m', keyOf(1).toUpperCase().replace('7F1D', '7G1D')), /UUID/);
});

test('the key bytes handed out are a copy: changing them changes no later signature', () => {
  const before = signMessage('m', KEY);
  apiKeyBytes(KEY).fill(0);
  assert.equal(signMessage('m', KEY), before);
  assert.equal(before, independently('m', KEY));
});

test('a forged signature is refused whichever of its characters differs, and a malformed one never matches', () => {
  const expected = signMessage('m', KEY);
  assert.equal(signaturesEqual(expected, expected), true);
  assert.equal(signaturesEqual(expected, expected.toUpperCase()), true);
  for (let i = 0; i < expected.length; i += 1) {
    const forged = `${expected.slice(0, i)}${expected[i] === '0' ? '1' : '0'}${expected.slice(i + 1)}`;
    assert.equal(signaturesEqual(expected, forged), false, `differs at ${i}`);
  }
  for (const malformed of [
    '',
    expected.slice(0, 15),
    `${expected}0`,
    `${expected.slice(0, 15)}g`,
    ' '.repeat(16),
  ]) {
    assert.equal(signaturesEqual(expected, malformed), false, JSON.stringify(malformed));
  }
});
