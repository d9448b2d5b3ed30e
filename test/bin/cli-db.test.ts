/** `amil db migrate` and `amil db status` on the embedded engine (SQLite in DATA_DIR), in this process. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { loadConfig } from '../../core/config.ts';
import { runProgram } from '../../bin/cli/program.ts';
import { markMoved } from '../../core/store/sqlite/moved-mark.ts';
import { REPO_ROOT, tempDir } from '../helpers.ts';

const SQLITE_MIGRATIONS = readdirSync(path.join(REPO_ROOT, 'core/store/sqlite/migrations'))
  .filter((f) => f.endsWith('.sql'))
  .sort();

async function amil(args: string[], dataDir: string) {
  let stdout = '';
  const code = await runProgram(args, {
    from: 'user',
    openDeps: () => assert.fail('amil db must not open the store'),
    loadConfig: () => loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir }),
    stdout: new Writable({
      write(chunk: Buffer, _enc, done) {
        stdout += chunk.toString();
        done();
      },
    }),
    stderr: new Writable({ write: (_c, _e, done) => done() }),
  });
  return { code, stdout };
}

test('amil db status on SQLite lists every migration as pending and creates no database file', async (t) => {
  const dataDir = tempDir(t);
  const status = await amil(['db', 'status'], dataDir);
  assert.equal(status.code, 0);
  const file = path.join(dataDir, 'amil.db');
  assert.equal(status.stdout.split('\n')[0], `sqlite ${file}`);
  for (const name of SQLITE_MIGRATIONS) assert.match(status.stdout, new RegExp(`^pending  ${name}$`, 'm'));
  assert.match(status.stdout, new RegExp(`${SQLITE_MIGRATIONS.length} pending: run amil db migrate\\.`));
  assert.equal(existsSync(file), false);
});

test('amil db migrate on SQLite applies each migration once, then has nothing to apply', async (t) => {
  const dataDir = tempDir(t);
  const first = await amil(['db', 'migrate'], dataDir);
  assert.equal(first.code, 0);
  assert.deepEqual(
    first.stdout.split('\n').filter((l) => l.startsWith('applied')),
    SQLITE_MIGRATIONS.map((name) => `applied  ${name}`),
  );
  const again = await amil(['db', 'migrate'], dataDir);
  assert.match(again.stdout, /^Nothing to apply\.$/m);
  const status = await amil(['db', 'status', '--json'], dataDir);
  const parsed = JSON.parse(status.stdout) as {
    engine: string;
    migrations: { name: string; appliedAt?: string }[];
  };
  assert.equal(parsed.engine, 'sqlite');
  assert.deepEqual(
    parsed.migrations.map((m) => m.name),
    SQLITE_MIGRATIONS,
  );
  assert.ok(parsed.migrations.every((m) => m.appliedAt !== undefined));
});

test('amil db status says when the SQLite file was moved to PostgreSQL, and where to (no password)', async (t) => {
  const dataDir = tempDir(t);
  assert.equal((await amil(['db', 'migrate'], dataDir)).code, 0);
  const file = path.join(dataDir, 'amil.db');
  const db = new Database(file);
  // The mark `amil migrate-store` leaves once PostgreSQL has committed the copy (decision 258).
  db.transaction(() =>
    markMoved(db, { target: 'postgres://amil:***@db.internal:5432/amil', at: '2026-11-29T01:00:00.000Z' }),
  )();
  db.close();
  const status = await amil(['db', 'status'], dataDir);
  assert.equal(status.code, 0);
  assert.match(
    status.stdout,
    /^Moved to PostgreSQL \(postgres:\/\/amil:\*\*\*@db\.internal:5432\/amil\) at 2026-11-29T01:00:00\.000Z by amil migrate-store: this file refuses writes\. Set DATABASE_URL to use PostgreSQL\.$/m,
  );
  const json = JSON.parse((await amil(['db', 'status', '--json'], dataDir)).stdout) as { moved?: unknown };
  assert.deepEqual(json.moved, {
    target: 'postgres://amil:***@db.internal:5432/amil',
    at: '2026-11-29T01:00:00.000Z',
  });
  // A file never moved says nothing of it.
  const fresh = tempDir(t);
  assert.equal((await amil(['db', 'migrate'], fresh)).code, 0);
  const plain = await amil(['db', 'status', '--json'], fresh);
  assert.equal((JSON.parse(plain.stdout) as { moved?: unknown }).moved, undefined);
  assert.doesNotMatch((await amil(['db', 'status'], fresh)).stdout, /Moved/);
});
