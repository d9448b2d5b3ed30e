import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, ENV_VARS, loadConfig } from '../../core/config.ts';

test('every variable of the table has one upper-case name and a sentence of documentation', () => {
  const names = ENV_VARS.map((v) => v.name);
  assert.deepEqual(
    names.filter((name, i) => names.indexOf(name) !== i),
    [],
    'a name given twice',
  );
  for (const v of ENV_VARS) {
    assert.match(v.name, /^[A-Z][A-Z0-9_]*$/, v.name);
    assert.ok(v.meaning.length >= 20 && v.default !== '', v.name);
  }
});

test('the config reads exactly the variables the README table lists, each once', () => {
  const reads: string[] = [];
  const env = new Proxy<Record<string, string | undefined>>(
    {},
    {
      get(_target, name) {
        if (typeof name === 'string') reads.push(name);
        return undefined;
      },
    },
  );
  loadConfig(env);
  assert.deepEqual([...reads].sort(), ENV_VARS.map((v) => v.name).sort());
});

test('a blank variable reads as unset, for every variable of the table', () => {
  const defaults = loadConfig({});
  for (const { name } of ENV_VARS) assert.deepEqual(loadConfig({ [name]: '  ' }), defaults, name);
});

test('an unset optional variable is undefined in the config, and its hosts keep no port of their own', () => {
  const config = loadConfig({});
  assert.equal(config.redisUrl, undefined);
  assert.equal(config.mail.smtpUrl, undefined);
  assert.deepEqual(config.hostPorts, {});
});

test('a value that does not parse is listed once, and the guards judge the variable as if it were unset', () => {
  assert.throws(
    () => loadConfig({ NODE_ENV: 'production', STAGING: 'maybe', ACQUIRER: 'paypal', SEED_DEMO: 'often' }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      const own = err.problems.filter((p) => /^(STAGING|ACQUIRER|SEED_DEMO)/.test(p));
      assert.deepEqual(own, [
        'SEED_DEMO must be true or false (got "often")',
        'ACQUIRER must be one of sandbox, none (got "paypal")',
        'STAGING must be true or false (got "maybe")',
      ]);
      return true;
    },
  );
});

test('the production guards are listed after the values that do not parse', () => {
  assert.throws(
    () => loadConfig({ NODE_ENV: 'production', SEED_DEMO: 'true', QR_PNG_TTL_DAYS: '0' }),
    (err: unknown) =>
      err instanceof ConfigError &&
      /^QR_PNG_TTL_DAYS/.test(err.problems[0] ?? '') &&
      err.problems.slice(1).every((p) => /production/.test(p)) &&
      err.problems.some((p) => p === 'SEED_DEMO must not be true when NODE_ENV=production'),
  );
});
