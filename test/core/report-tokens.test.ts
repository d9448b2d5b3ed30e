import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, UnsecuredJWT } from 'jose';
import { mintReportToken, parseTtl, verifyReportToken } from '../../core/report-tokens.ts';
import { problemOf, startApp } from '../helpers.ts';

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

/** A token signed with our secret and the given claims, as someone holding the secret could make one. */
async function signClaims(claims: Record<string, unknown>, set: (jwt: SignJWT) => SignJWT = (jwt) => jwt) {
  return set(new SignJWT(claims).setProtectedHeader({ alg: 'HS256' })).sign(new TextEncoder().encode(SECRET));
}

test('a minted token re-signed with more agencies than its stored record is refused', async (t) => {
  const { deps } = await startApp(t);
  const { jti, expiresAt } = await mintReportToken(deps.store, SECRET, {
    agencies: ['LZS'],
    ttlSeconds: 3600,
    now: NOW,
  });
  const exp = Math.floor(expiresAt.getTime() / 1000);
  const widened = await signClaims({ agencies: ['LZS', 'PPZ'] }, (jwt) =>
    jwt
      .setJti(jti)
      .setIssuedAt(Math.floor(NOW.getTime() / 1000))
      .setExpirationTime(exp),
  );
  assert.deepEqual(await verifyReportToken(deps.store, SECRET, widened, NOW), { refused: 'token-invalid' });

  // The same jti with a later exp than the one stored is refused too: the store's expiry is the lifetime.
  const prolonged = await signClaims({ agencies: ['LZS'] }, (jwt) =>
    jwt.setJti(jti).setExpirationTime(exp + 86_400),
  );
  assert.deepEqual(await verifyReportToken(deps.store, SECRET, prolonged, NOW), { refused: 'token-invalid' });
});

test('a token without exp is refused even when its jti was minted', async (t) => {
  const { deps } = await startApp(t);
  const { jti } = await mintReportToken(deps.store, SECRET, {
    agencies: ['LZS'],
    ttlSeconds: 3600,
    now: NOW,
  });
  const eternal = await signClaims({ agencies: ['LZS'] }, (jwt) => jwt.setJti(jti).setIssuedAt());
  assert.deepEqual(await verifyReportToken(deps.store, SECRET, eternal, NOW), { refused: 'token-invalid' });
});

test('the agencies granted are those of the stored token, whatever the claims list', async (t) => {
  const { deps } = await startApp(t);
  const { token, jti } = await mintReportToken(deps.store, SECRET, {
    agencies: ['PPZ', 'LZS'],
    ttlSeconds: 3600,
    now: NOW,
  });
  assert.deepEqual(await verifyReportToken(deps.store, SECRET, token, NOW), { agencies: ['PPZ', 'LZS'] });
  // The claims may list the stored agencies in another order; they grant the same, never more.
  const reordered = await signClaims({ agencies: ['LZS', 'PPZ'] }, (jwt) =>
    jwt.setJti(jti).setExpirationTime(Math.floor(NOW.getTime() / 1000) + 3600),
  );
  assert.deepEqual(await verifyReportToken(deps.store, SECRET, reordered, NOW), { agencies: ['PPZ', 'LZS'] });
});

test('a revoked token is refused on the very next report request', async (t) => {
  const app = await startApp(t);
  const { token, jti } = await mintReportToken(app.deps.store, app.deps.config.reportTokenSecret, {
    agencies: ['LZS'],
    ttlSeconds: 3600,
    now: new Date(),
  });
  const report = () =>
    fetch(`${app.url}/api/report/v1/payment?agency=LZS`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal((await report()).status, 200);
  assert.equal(await app.deps.store.reportTokens.revoke(jti, new Date()), true);
  const refused = await report();
  assert.equal(refused.status, 401);
  assert.match((await problemOf(refused)).type, /token-revoked/);
});
