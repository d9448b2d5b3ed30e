import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers.ts';

/** Which top-level folders each folder may import from (ARCHITECTURE.md). Imports of itself are always allowed. */
const MAY_IMPORT: Record<string, string[]> = {
  schemas: [],
  core: ['schemas'],
  reports: ['core', 'schemas'],
  ingest: ['reports', 'core', 'schemas'],
  pipeline: ['ingest', 'reports', 'core', 'schemas'],
  bin: ['pipeline', 'ingest', 'reports', 'core', 'schemas'],
  bench: ['pipeline', 'ingest', 'reports', 'core', 'schemas'],
  test: ['bin', 'pipeline', 'ingest', 'reports', 'core', 'schemas', 'fixtures'],
};

function sourceFiles(folder: string): string[] {
  let entries;
  try {
    entries = readdirSync(path.join(REPO_ROOT, folder), { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}

test('imports go one way: bin -> pipeline -> ingest -> reports -> core -> schemas', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
    for (const file of sourceFiles(folder)) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
        const target = path.relative(REPO_ROOT, path.resolve(path.dirname(file), match[1] ?? ''));
        const top = target.split(path.sep)[0] ?? '';
        checked += 1;
        if (top !== folder && !allowed.includes(top) && top !== 'package.json') {
          violations.push(`${path.relative(REPO_ROOT, file)} imports ${target}`);
        }
      }
    }
  }
  assert.ok(checked > 20, 'the scan found the imports');
  assert.deepEqual(violations, []);
});

test('process.env is read only where the configuration is loaded', () => {
  const readers = Object.keys(MAY_IMPORT)
    .filter((f) => f !== 'test' && f !== 'bench')
    .flatMap(sourceFiles)
    .filter((file) => /process\.env\b/.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(REPO_ROOT, file));
  assert.deepEqual(readers.sort(), ['bin/amil.ts', 'core/bootstrap.ts', 'core/config.ts']);
});
