/**
 * A throwaway redis-server on a free loopback port for the benchmarks: what test/support/redis.ts does for
 * the tests, without node:test (bench/ may not import test/). No persistence, its own working directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface BenchRedis {
  url: string;
  pid: number;
  /** Stops the server and waits for it to exit. */
  stop(): Promise<void>;
  /** Stops it at once, synchronously (for a watchdog or a signal handler). */
  killNow(): void;
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts redis-server in `dir`; rejects (with the server stopped) if it is not ready within `readyMs`. */
export async function startRedis(dir: string, readyMs = 10_000): Promise<BenchRedis> {
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child: ChildProcess = spawn('redis-server', [...args, '--dir', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killNow = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });

  await new Promise<void>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      killNow();
      reject(new Error(`redis-server was not ready within ${readyMs} ms: ${output}`));
    }, readyMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`cannot start redis-server (is it installed?): ${err.message}`));
    });
    child.stdout?.on('data', (d: Buffer) => {
      output += d.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${String(code)}: ${output}`));
    });
  });
  if (child.pid === undefined) throw new Error('redis-server has no pid');
  return { url: `redis://127.0.0.1:${port}`, pid: child.pid, stop, killNow };
}

/** CPU seconds (user + system) a process has used so far, from /proc; NaN where /proc is unavailable. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return ticks / 100; // USER_HZ is 100 on Linux
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds a process and all its descendants have used so far, the exited ones included (their time is
 * in each parent's cutime and cstime once reaped): a PostgreSQL server's postmaster and its backends.
 * NaN where /proc is unavailable.
 */
export function processTreeCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime, cstime (fields 14 to 17)
    let seconds = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of children === '' ? [] : children.split(' ')) {
      const own = processTreeCpuSeconds(Number(child));
      // A child that exited between the two reads is already in this process's cutime.
      if (!Number.isNaN(own)) seconds += own;
    }
    return seconds;
  } catch {
    return Number.NaN;
  }
}
