import { test } from 'node:test';
import assert from 'node:assert/strict';
import { signGet } from '../../core/signatures.ts';
import { reportToken, startApp } from '../helpers.ts';
import { LZS_KEY } from '../support/merchant.ts';

test('the Bearer scheme name is read in any case, as RFC 9110 says, and a wrong scheme is still refused', async (t) => {
  const app = await startApp(t);
  const token = await reportToken(app, ['LZS'], app.deps.clock.now());
  const get = (authorization: string) =>
    fetch(`${app.url}/api/report/v1/payment?agency=LZS&output=json`, { headers: { authorization } });
  for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
    const res = await get(`${scheme} ${token}`);
    assert.equal(res.status, 200, scheme);
    assert.equal(((await res.json()) as { status: string }).status, 'OK', scheme);
  }
  const basic = await get(`Basic ${token}`);
  assert.equal(basic.status, 401, 'another scheme is not a bearer token');
});

test('a signed report GET whose signature is in upper-case hex is accepted; a wrong one is still refused', async (t) => {
  const app = await startApp(t);
  const signed = signGet(
    '/api/report/v1/payment',
    { agency: 'LZS', output: 'json' },
    LZS_KEY,
    app.deps.clock.now(),
  );
  const upper = signed.replace(/signature=([0-9a-f]{16})$/, (_, s: string) => `signature=${s.toUpperCase()}`);
  assert.notEqual(upper, signed, 'the signature has hex letters to change case');
  assert.equal((await fetch(`${app.url}${upper}`)).status, 200);
  const wrong = `${upper.slice(0, -1)}${upper.endsWith('0') ? '1' : '0'}`;
  assert.equal((await fetch(`${app.url}${wrong}`)).status, 401);
});
