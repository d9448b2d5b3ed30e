import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helpers.ts';

/**
 * Which top-level folders each folder may import from (ARCHITECTURE.md). Imports of itself are always allowed.
 * ingest/ and reports/ are siblings: neither imports the other. Benchmarks, like tests, build the real app
 * through bin/create-app.ts.
 */
const MAY_IMPORT: Record<string, string[]> = {
  schemas: [],
  core: ['schemas'],
  reports: ['core', 'schemas'],
  ingest: ['core', 'schemas'],
  pipeline: ['ingest', 'reports', 'core', 'schemas'],
  bin: ['pipeline', 'ingest', 'reports', 'core', 'schemas'],
  bench: ['bin', 'pipeline', 'ingest', 'reports', 'core', 'schemas'],
  test: ['bin', 'pipeline', 'ingest', 'reports', 'core', 'schemas', 'fixtures'],
};

/** Every relative import of a source file, as a path from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((match) =>
    path.relative(REPO_ROOT, path.resolve(path.dirname(file), match[1] ?? '')),
  );
}

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

test('imports go one way: bin -> pipeline -> {ingest, reports} -> core -> schemas', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
    for (const file of sourceFiles(folder)) {
      for (const target of importsOf(file)) {
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

test('ingest/ and reports/ are siblings that never import each other', () => {
  const crossings = (from: string, to: string) =>
    sourceFiles(from).flatMap((file) =>
      importsOf(file)
        .filter((target) => target.split(path.sep)[0] === to)
        .map((target) => `${path.relative(REPO_ROOT, file)} imports ${target}`),
    );
  assert.ok(
    sourceFiles('ingest').length > 10 && sourceFiles('reports').length > 10,
    'both folders were read',
  );
  assert.deepEqual([...crossings('ingest', 'reports'), ...crossings('reports', 'ingest')], []);
});

test('process.env is read only where the configuration is loaded', () => {
  const readers = Object.keys(MAY_IMPORT)
    .filter((f) => f !== 'test' && f !== 'bench')
    .flatMap(sourceFiles)
    .filter((file) => /process\.env\b/.test(readFileSync(file, 'utf8')))
    .map((file) => path.relative(REPO_ROOT, file));
  assert.deepEqual(readers.sort(), ['bin/amil.ts', 'core/bootstrap.ts', 'core/config.ts']);
});

/** Every module a source file imports by package name (`better-sqlite3`, `node:fs`). */
function packagesOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"./][^'"]*)['"]/g)].map(
    (match) => match[1] ?? '',
  );
}

test('only the SQLite engine (core/store/sqlite/) imports better-sqlite3; tests and benchmarks may, for a raw handle', () => {
  const code = Object.keys(MAY_IMPORT).filter((folder) => folder !== 'test' && folder !== 'bench');
  const importers = code
    .flatMap(sourceFiles)
    .filter((file) => packagesOf(file).includes('better-sqlite3'))
    .map((file) => path.relative(REPO_ROOT, file));
  assert.ok(importers.length > 0, 'the engine was found');
  assert.deepEqual(
    importers.filter((file) => !file.startsWith(`core${path.sep}store${path.sep}sqlite${path.sep}`)),
    [],
  );
});

test('the store interfaces (core/store/*.ts) hold no engine: no SQL module, no import of an engine folder', () => {
  const interfaces = sourceFiles('core/store').filter(
    (file) => path.dirname(file) === path.join(REPO_ROOT, 'core/store') && path.basename(file) !== 'index.ts',
  );
  assert.ok(interfaces.length > 10, 'the interfaces were read');
  const engineBound = interfaces.flatMap((file) =>
    [
      ...importsOf(file).filter((target) => target.startsWith(path.join('core', 'store', 'sqlite'))),
      ...packagesOf(file),
    ]
      .filter((target) => !target.startsWith('node:'))
      .map((target) => `${path.relative(REPO_ROOT, file)} imports ${target}`),
  );
  assert.deepEqual(engineBound, []);
});
