import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_VARS } from '../core/config.ts';
import { ERROR_CATALOGUE } from '../core/errors.ts';
import { REPO_ROOT } from './helpers.ts';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

test('the README configuration table lists exactly the variables the config reads, with their defaults', () => {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Guarantees'));
  const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [
    m[1],
    m[2]?.trim().replace(/`/g, ''),
  ]);
  assert.deepEqual(
    rows,
    ENV_VARS.map((v) => [v.name, v.default]),
  );
});

test('docs/errors.md documents every problem type of the catalogue with its status', () => {
  const doc = read('docs/errors.md');
  for (const [code, { status }] of Object.entries(ERROR_CATALOGUE)) {
    assert.match(doc, new RegExp(`^\\| \`${code}\` \\| ${status} \\|`, 'm'), code);
  }
});

test('the README shows the demo password that embedded mode seeds', () => {
  const seed = JSON.parse(read('fixtures/demo/seed.json')) as {
    partners: { id: string; password: string }[];
  };
  const readme = read('README.md');
  for (const partner of seed.partners) {
    assert.ok(readme.includes(`\`${partner.password}\``), partner.password);
    assert.ok(readme.includes(`\`${partner.id}\``), partner.id);
  }
});
