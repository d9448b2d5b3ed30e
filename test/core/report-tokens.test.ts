import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, UnsecuredJWT } from 'jose';
import { mintReportToken, parseTtl, verifyReportToken } from '../../core/report-tokens.ts';
import { startApp } from '../helpers.ts';

const SECRET = 'test-report-token-secret-0123456789abcdef';
const NOW = new Date('2026-11-20T02:00:00Z');

test('report tokens: valid until expiry, refused when revoked, expired, wrongly signed or unsigned', async (t) => {
  const { deps } = await startApp(t);
  const { token, jti } = await mintReportToken(deps.store, SECRET, {
    agencies: ['LZS', 'PPZ'],
    ttlSeconds: 3600,
    now: NOW,
  });
  const verify = (tok: string, at = NOW, secret = SECRET) => verifyReportToken(deps.store, secret, tok, at);

  assert.deepEqual(await verify(token), { agencies: ['LZS', 'PPZ'] });
  assert.deepEqual(await verify(token, new Date(NOW.getTime() + 3601_000)), { refused: 'token-expired' });
  assert.deepEqual(await verify(token, NOW, 'another-secret-of-at-least-32-characters'), {
    refused: 'token-invalid',
  });
  assert.deepEqual(await verify('not.a.jwt'), { refused: 'token-malformed' });

  // alg none, and a token signed with our secret but never minted (unknown jti), are refused.
  const none = new UnsecuredJWT({ agencies: ['LZS'] })
    .setJti(jti)
    .setIssuedAt()
    .setExpirationTime('1h')
    .encode();
  assert.equal('refused' in (await verify(none)), true);
  const forged = await new SignJWT({ agencies: ['LZS'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setJti('00000000-0000-4000-8000-000000000000')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
  assert.deepEqual(await verify(forged, new Date()), { refused: 'token-invalid' });
  const hs512 = await new SignJWT({ agencies: ['LZS'] })
    .setProtectedHeader({ alg: 'HS512' })
    .setJti(jti)
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));
  assert.equal('refused' in (await verify(hs512, new Date())), true, 'the algorithm is pinned');

  assert.equal(await deps.store.reportTokens.revoke(jti, NOW), true);
  assert.deepEqual(await verify(token), { refused: 'token-revoked' });
});

test('token lifetimes read as 90d, 12h, 30m or 3600s', () => {
  assert.equal(parseTtl('90d'), 90 * 86_400);
  assert.equal(parseTtl('12h'), 43_200);
  assert.equal(parseTtl('30m'), 1800);
  assert.equal(parseTtl('3600s'), 3600);
  for (const bad of ['90', 'd', '1w', '-1d', '1.5h']) assert.equal(parseTtl(bad), undefined, bad);
});
