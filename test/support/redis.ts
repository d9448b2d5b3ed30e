/** A real redis-server on a free loopback port, started and stopped by the test (no mocks). */
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { onCleanup, tempDir } from '../helpers.ts';
import { freePort } from './free-port.ts';

export interface TestRedis {
  url: string;
  /** A key prefix no other test uses. */
  prefix: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Freezes redis-server (SIGSTOP): connections stay open and nothing answers, as a Redis stuck on its disk. */
  freeze(): void;
  /** Thaws it (SIGCONT). */
  thaw(): void;
}

let prefixes = 0;

export async function startRedis(t: TestContext): Promise<TestRedis> {
  const port = await freePort();
  const dir = tempDir(t, 'amil-redis-');
  let child: ChildProcess | undefined;

  const start = () =>
    new Promise<void>((resolve, reject) => {
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ];
      const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      child = proc;
      let output = '';
      proc.on('error', (err) =>
        reject(new Error(`cannot start redis-server (is it installed?): ${err.message}`)),
      );
      proc.stdout.on('data', (d: Buffer) => {
        output += d.toString();
        if (output.includes('Ready to accept connections')) resolve();
      });
      proc.on('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    });

  const stop = () =>
    new Promise<void>((resolve) => {
      const proc = child;
      child = undefined;
      if (!proc || proc.exitCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });

  await start();
  onCleanup(t, stop);
  prefixes += 1;
  return {
    url: `redis://127.0.0.1:${port}`,
    prefix: `test${process.pid}x${prefixes}`,
    stop,
    start,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
  };
}
