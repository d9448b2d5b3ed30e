import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { constantTimeEqual, constantTimeEqualOfLength } from '../../core/constant-time.ts';
import { isEmailAddress } from '../../core/email.ts';
import { isCalendarDay } from '../../core/time.ts';
import { compileValidators } from '../../schemas/index.ts';
import { REPO_ROOT } from '../helpers.ts';

/** The source files of the folders this branch keeps to one rule each (pipeline/ is checked with its own). */
function sources(): { file: string; text: string }[] {
  return ['core', 'ingest', 'reports', 'bin', 'schemas'].flatMap((folder) =>
    readdirSync(path.join(REPO_ROOT, folder), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => {
        const file = path.join(e.parentPath, e.name);
        return { file: path.relative(REPO_ROOT, file), text: readFileSync(file, 'utf8') };
      }),
  );
}

const where = (pattern: RegExp) =>
  sources()
    .filter(({ text }) => pattern.test(text))
    .map(({ file }) => file);

test('one constant-time comparison: timingSafeEqual is called in core/constant-time.ts only', () => {
  assert.deepEqual(where(/timingSafeEqual\(/), ['core/constant-time.ts']);
});

test('the constant-time comparison tells equal secrets from different ones, whatever their lengths', () => {
  assert.equal(constantTimeEqual('s3cret-token', 's3cret-token'), true);
  assert.equal(constantTimeEqual('s3cret-token', 's3cret-tokeN'), false);
  assert.equal(constantTimeEqual('s3cret', 's3cret-token'), false);
  assert.equal(constantTimeEqual('', ''), true);
  assert.equal(constantTimeEqual(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 3])), true);
  assert.equal(constantTimeEqual(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 4])), false);
});

test('the constant-time comparison of public-length texts tells equal from different, and other lengths apart', () => {
  assert.equal(constantTimeEqualOfLength('0123456789abcdef', '0123456789abcdef'), true);
  assert.equal(constantTimeEqualOfLength('0123456789abcdef', '0123456789abcdeF'), false);
  assert.equal(constantTimeEqualOfLength('1123456789abcdef', '0123456789abcdef'), false);
  assert.equal(constantTimeEqualOfLength('0123456789abcde', '0123456789abcdef'), false);
  assert.equal(constantTimeEqualOfLength('é', 'e\u0301'), false, 'compared as UTF-8 bytes');
  assert.equal(constantTimeEqualOfLength('', ''), true);
});

test('one e-mail rule: no hand-written e-mail pattern outside core/email.ts', () => {
  assert.deepEqual(where(/\[\^\\s@/), []);
});

test('the configuration, the payload schemas and the rule itself accept and refuse the same addresses', () => {
  const validators = compileValidators({
    bankAgencyCodes: ['BANK'],
    formats: { email: isEmailAddress, date: isCalendarDay },
  });
  const checkout = (email: string) =>
    validators.checkoutRequest({
      agency: 'LZS',
      refNo: 'R-1',
      amount: '10.00',
      email,
      returnUrl: 'https://x.my/',
    });
  const config = (email: string) => {
    try {
      loadConfig({ NODE_ENV: 'test', BANK_TEST_RECIPIENTS: email });
      return true;
    } catch (err) {
      if (err instanceof ConfigError) return false;
      throw err;
    }
  };
  for (const [email, valid] of [
    ['aisyah@example.my', true],
    ['Keluarga.Aisyah+zakat@Example.MY', true],
    ['aisyah@example', false],
    ['aisyah@exa_mple.my', false],
    ['aisyah@@example.my', false],
    ['aisyah @example.my', false],
  ] as const) {
    assert.equal(isEmailAddress(email), valid, email);
    assert.equal(checkout(email), valid, `checkout ${email}`);
    assert.equal(config(email), valid, `config ${email}`);
  }
});

test('one calendar-day rule: the YYYY-MM-DD check is written in core/time.ts only', () => {
  assert.deepEqual(where(/\\d\{4\}-\\d\{2\}-\\d\{2\}\$/), ['core/time.ts']);
});

test('no code casts the request state: each route states what its middlewares set (core/http/state.ts)', () => {
  assert.deepEqual(where(/ctx\.state(?:\.\w+)?\s+as\s/), []);
});

test('one calendar-day rule also for queued work: a nightly run of a day that does not exist is refused', () => {
  const validators = compileValidators({
    bankAgencyCodes: ['BANK'],
    formats: { email: isEmailAddress, date: isCalendarDay },
  });
  const nightly = validators.jobs('https://schemas.amil.my/jobs/recon-nightly-job.json');
  assert.equal(nightly({ day: '2026-02-28' }), true);
  assert.equal(nightly({ day: '2026-02-31' }), false);
  assert.deepEqual(
    nightly.errors().map((e) => e.pointer),
    ['/day'],
  );
});
