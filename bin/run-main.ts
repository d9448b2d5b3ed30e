import { ConfigError } from '../core/config.ts';
import { PortInUseError } from '../core/http/serve.ts';
import { StoreMovedError } from '../core/store/sqlite/moved-mark.ts';

/** An error whose message says what the operator must change: printed alone, without a stack trace. */
const isOperators = (err: unknown): err is Error =>
  err instanceof ConfigError || err instanceof PortInUseError || err instanceof StoreMovedError;

/** How long a process signalled while it starts may go on starting before it exits anyway. */
const STOP_WHILE_STARTING_MS = 10_000;

/**
 * Runs a long-lived process: start() returns its stop function, which SIGTERM or SIGINT call once.
 * A configuration error is printed with every problem and exits 1; so are a taken port and a store moved to
 * PostgreSQL, in one line: what the operator must change, not a stack trace.
 *
 * The signals are heard from the first moment: a SIGTERM while the process is still starting (a rolling
 * restart, or a request already taken by a server that has not finished starting) stops it gracefully as
 * soon as it has started, instead of killing it mid-request; one that is still starting 10 s later (waiting
 * for its database) exits then.
 */
export async function runMain(start: () => Promise<() => Promise<void>>): Promise<void> {
  let stop: (() => Promise<void>) | undefined;
  let stopping = false;
  let stillStarting: NodeJS.Timeout | undefined;
  const shutDown = (run: () => Promise<void>) =>
    run().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal} received: shutting down gracefully\n`);
    if (stop) return void shutDown(stop);
    stillStarting = setTimeout(() => {
      process.stderr.write('still starting: exiting without a graceful stop\n');
      process.exit(1);
    }, STOP_WHILE_STARTING_MS).unref();
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    stop = await start();
  } catch (err) {
    process.stderr.write(`${isOperators(err) ? err.message : String((err as Error).stack ?? err)}\n`);
    process.exit(1);
  }
  // Started: the graceful stop takes its own time (SHUTDOWN_GRACE_MS), not what is left of the 10 s.
  clearTimeout(stillStarting);
  if (stopping) void shutDown(stop);
}
