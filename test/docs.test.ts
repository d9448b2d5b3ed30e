import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_VARS } from '../core/config.ts';
import { ERROR_CATALOGUE } from '../core/errors.ts';
import { EXCEPTION_CODES } from '../pipeline/normalise/rules.ts';
import { REPO_ROOT } from './helpers.ts';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

/** The cells of every Markdown table row in `text`, trimmed and without backticks. */
const tableRows = (text: string): string[][] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim().replace(/`/g, '')),
    );

test('the README configuration table is the one derived from the configuration table (npx tsx core/config/readme.ts)', () => {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Guarantees'));
  // Cells as written, backticks kept: a default or meaning edited in the table but not here is stale.
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
  assert.deepEqual(
    rows,
    ENV_VARS.map((v) => [`\`${v.name}\``, v.default, v.meaning]),
  );
});

test('docs/errors.md documents every problem type of the catalogue with its status', () => {
  const documented = new Map(
    tableRows(read('docs/errors.md')).map(([type, status]) => [type, Number(status)]),
  );
  for (const [code, { status }] of Object.entries(ERROR_CATALOGUE))
    assert.equal(documented.get(code), status, code);
});

test('the README shows every demo credential that embedded mode seeds', () => {
  const seed = JSON.parse(read('fixtures/demo/seed.json')) as {
    agencies: { code: string; apiKey: string }[];
    partners: { id: string; password: string }[];
    dashboardUsers: { email: string; password: string }[];
  };
  const readme = read('README.md');
  for (const partner of seed.partners) {
    assert.ok(readme.includes(`\`${partner.password}\``), partner.password);
    assert.ok(readme.includes(`\`${partner.id}\``), partner.id);
  }
  for (const agency of seed.agencies) assert.ok(readme.includes(`\`${agency.apiKey}\``), agency.code);
  for (const user of seed.dashboardUsers) {
    assert.ok(readme.includes(`\`${user.email}\``), user.email);
    assert.ok(readme.includes(`\`${user.password}\``), user.password);
  }
  assert.ok(readme.includes('`demo-admin-password`'));
});

test('docs/exceptions.md documents every normalisation exception code', () => {
  const documented = tableRows(read('docs/exceptions.md')).map(([code]) => code);
  assert.deepEqual(documented.slice(1).sort(), Object.keys(EXCEPTION_CODES).sort());
});
