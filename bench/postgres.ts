/**
 * A throwaway PostgreSQL 15 for the benchmarks, started as the tests start theirs (Debian's binaries, initdb
 * in a temporary directory, a free loopback port, fsync on; as the `postgres` user when running as root),
 * so each benchmark measures both engines in one run on the same machine at the same moment.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './redis.ts';

const BIN = '/usr/lib/postgresql/15/bin';
const SUPERUSER = 'amil';

/**
 * Starts a PostgreSQL cluster with one database (C collation, as amil requires): its URL, the postmaster's
 * pid (for the server's CPU, processTreeCpuSeconds of ./redis.ts) and a stop.
 */
export async function startBenchPostgres(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'amil-bench-pg-'));
  const data = path.join(dir, 'data');
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  const asOwner = process.getuid?.() === 0 ? { uid: id('-u'), gid: id('-g') } : {};
  if ('uid' in asOwner && asOwner.uid !== undefined) chownSync(dir, asOwner.uid, asOwner.gid);
  execFileSync(
    path.join(BIN, 'initdb'),
    ['-D', data, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-instructions'],
    { ...asOwner, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
  );
  const port = await freePort();
  const child = spawn(
    path.join(BIN, 'postgres'),
    ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=on'],
    { ...asOwner, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // A benchmark that dies must not leave a server behind.
  const onExit = () => child.kill('SIGQUIT');
  process.once('exit', onExit);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.on('error', (err) => reject(new Error(`cannot start postgres: ${err.message}`)));
    child.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('database system is ready to accept connections')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`postgres exited with ${code}: ${output}`)));
  });
  execFileSync(path.join(BIN, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', SUPERUSER, 'amil'], {
    stdio: 'ignore',
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      process.removeListener('exit', onExit);
      const removed = () => {
        rmSync(dir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return removed();
      child.once('exit', removed);
      child.kill('SIGINT');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  if (child.pid === undefined) throw new Error('postgres has no pid');
  return { url: `postgres://${SUPERUSER}@127.0.0.1:${port}/amil`, pid: child.pid, stop };
}
