import { ConfigError } from '../core/config.ts';
import { PortInUseError } from '../core/http/serve.ts';
import { StoreMovedError } from '../core/store/sqlite/moved-mark.ts';

/** An error whose message says what the operator must change: printed alone, without a stack trace. */
const isOperators = (err: unknown): err is Error =>
  err instanceof ConfigError || err instanceof PortInUseError || err instanceof StoreMovedError;

/**
 * Runs a long-lived process: start() returns its stop function, which SIGTERM or SIGINT call once.
 * A configuration error is printed with every problem and exits 1; so are a taken port and a store moved to
 * PostgreSQL, in one line: what the operator must change, not a stack trace.
 */
export async function runMain(start: () => Promise<() => Promise<void>>): Promise<void> {
  let stop: () => Promise<void>;
  try {
    stop = await start();
  } catch (err) {
    process.stderr.write(`${isOperators(err) ? err.message : String((err as Error).stack ?? err)}\n`);
    process.exit(1);
  }
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal} received: shutting down gracefully\n`);
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`shutdown failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
