/**
 * Runs the real entry points (bin/) as child processes, the way ops and CI do; and the ops CLI's program
 * in this process, over an environment of its own, for the many tests that only need what a command does.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { cliEnvironment } from '../../bin/cli/environment.ts';
import { runProgram } from '../../bin/cli/program.ts';
import { REPO_ROOT } from '../helpers.ts';

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function baseEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env };
}

/** A stream that keeps what is written to it. */
function capture(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/**
 * Runs `amil <args>` to completion in this process: the program bin/amil.ts runs, over `env` alone (as a
 * child given only `env` would see it), its output captured. A child process costs two to four seconds of
 * CPU to load the program; this costs none (decision 257). {@link runCliProcess} tests the entry point.
 */
export async function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<Finished> {
  const stdout = capture();
  const stderr = capture();
  const code = await runProgram(args, {
    ...cliEnvironment(baseEnv(env), stderr.stream),
    from: 'user',
    stdout: stdout.stream,
    readStdin: () => stdin ?? '',
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Runs `amil <args>` to completion as its own process: `node --import tsx bin/amil.ts <args>`. */
export function runCliProcess(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bin/amil.ts'), ...args], {
      cwd: REPO_ROOT,
      env: baseEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

export interface RunningServer {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<Finished>;
}

/** The web process's line once it listens: its URL. */
export const SERVER_LISTENING = /"url":"(http:\/\/[^"]+)"/;

/**
 * Starts `bin/server.ts`, resolving once it logs its URL (or rejecting if it exits first); `nodeFlags` go
 * before the script, as an operator's `node --max-old-space-size=...` would. A test that must see an earlier
 * line gives it as `until` (its first group non-empty, and `url` then that group).
 */
export function startServer(
  env: Record<string, string>,
  nodeFlags: string[] = [],
  until = SERVER_LISTENING,
): Promise<RunningServer> {
  return startProcess('bin/server.ts', { PORT: '0', ...env }, until, nodeFlags);
}

/** Starts `bin/worker.ts`, resolving once it says it started (or once its output matches `until`). */
export function startWorkerProcess(
  env: Record<string, string>,
  until = /"msg":"worker (started)"/,
): Promise<RunningServer> {
  return startProcess('bin/worker.ts', env, until);
}

function startProcess(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
  nodeFlags: string[] = [],
): Promise<RunningServer> {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(REPO_ROOT, script)], {
    cwd: REPO_ROOT,
    env: baseEnv({ LOG_LEVEL: 'info', ...env }),
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<Finished>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      const match = ready.exec(stdout);
      if (match?.[1]) resolve({ child, url: match[1], output: () => stdout + stderr, exited });
    });
    void exited.then((f) => reject(new Error(`${script} exited with ${f.code}: ${f.stderr}`)));
  });
}

/**
 * How long a process may take to stop on SIGTERM, whatever its dependencies went through: well inside an
 * orchestrator's grace period (30 s by default in Kubernetes), after which it would be SIGKILLed mid-work.
 */
const STOP_WITHIN_MS = 10_000;

/**
 * Sends SIGTERM and checks that the process exits 0 (failing with its stderr otherwise) within
 * STOP_WITHIN_MS; one still running then is SIGKILLed, and fails the test.
 */
export async function stopGracefully(running: RunningServer): Promise<void> {
  running.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STOP_WITHIN_MS);
  });
  const ended = await Promise.race([running.exited, late]);
  clearTimeout(timer);
  if (ended === 'late') {
    running.child.kill('SIGKILL');
    assert.fail(`still running ${STOP_WITHIN_MS} ms after SIGTERM: ${running.output().slice(-2000)}`);
  }
  assert.equal(ended.code, 0, ended.stderr);
}

/**
 * `GET /health/ready` read as a load balancer and an operator read it: the status, the content type, the
 * problem's detail and the pointers of the checks that failed (none when ready).
 */
export async function readiness(
  url: string,
): Promise<{ status: number; contentType: string | null; detail: string; failing: string[] }> {
  const response = await fetch(`${url}/health/ready`);
  const body = (await response.json()) as { detail?: string; errors?: { pointer: string }[] };
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    detail: body.detail ?? '',
    failing: (body.errors ?? []).map((e) => e.pointer),
  };
}

/** Polls `GET /health/ready` until it answers 200 or `ms` pass; its last status. */
export async function readyWithin(url: string, ms: number): Promise<number> {
  const status = async () => (await fetch(`${url}/health/ready`)).status;
  for (let waited = 0; (await status()) !== 200 && waited < ms; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return status();
}
