import type { Piscina } from 'piscina';
import { DomainError } from '../../core/errors.ts';
import {
  ARCHIVE_GZIP_MIN_BYTES,
  prepareBatch,
  type BatchRules,
  type PreparedBatch,
} from './prepare-batch.ts';
import type { PrepareResult, PrepareTask, WorkerSettings } from './prepare-worker.ts';
import { fromColumns } from './record-columns.ts';
import { threadPool } from '../../core/thread-pool.ts';

/**
 * Bodies from this size go to a worker thread (about 100 records). Below it the thread hop (a copy of the
 * body and of the prepared records) costs more than the work it moves; a batch of one stays inline. The
 * archive's gzip threshold is the same size, so a body is compressed where it is prepared, off the loop.
 */
export const OFF_THREAD_MIN_BYTES = ARCHIVE_GZIP_MIN_BYTES;
// A worker idle this long exits, so a process that stopped receiving large batches holds no threads. It
// needs no closing at shutdown: piscina unrefs idle threads, so they never keep a stopping process alive.
const IDLE_TIMEOUT_MS = 30_000;
/**
 * Bodies handed to a thread at once: the one it prepares and the next, waiting in its own queue (the task is
 * synchronous, so they run one after the other). With one, a thread that finished waited for the event loop,
 * busy committing a group, to collect its result and send the next body: about 8% of the webhook's
 * throughput at batch 1,000 on two cores (decision 216).
 */
const TASKS_PER_THREAD = 2;

/** Reads, checks and prepares webhook bodies, on worker threads when they are large enough. */
export interface BatchPreparer {
  /** The prepared batch of `body`, or the DomainError of its refusal (400, 413, 422). */
  prepare(body: Buffer, receivedAt: Date): Promise<PreparedBatch & { thread: 'worker' | 'request' }>;
}

/**
 * A preparer over a piscina pool of `threads` threads, created on first use (0: every body on the request
 * thread). The worker file is TypeScript: threads get the parent's loader flags (core/worker-exec-argv.ts).
 */
export function createBatchPreparer(rules: BatchRules, threads: number): BatchPreparer {
  let pool: Piscina<PrepareTask, PrepareResult> | undefined;
  const poolOf = () => {
    const { maxRecords, routes, timePastDays, timeFutureMinutes } = rules.webhook;
    const workerData: WorkerSettings = { maxRecords, routes, timePastDays, timeFutureMinutes };
    pool ??= threadPool<PrepareTask, PrepareResult>(new URL('./prepare-worker.ts', import.meta.url), {
      minThreads: 0,
      maxThreads: threads,
      concurrentTasksPerWorker: TASKS_PER_THREAD,
      idleTimeout: IDLE_TIMEOUT_MS,
      workerData,
    });
    return pool;
  };

  return {
    async prepare(body, receivedAt) {
      if (threads === 0 || body.length < OFF_THREAD_MIN_BYTES)
        return { ...prepareBatch(body, receivedAt, rules), thread: 'request' };
      const result = await poolOf().run({ body, receivedAt: receivedAt.getTime() });
      if (!result.ok) throw new DomainError(result.code, result.detail, result.errors, result.headers);
      // A Buffer crosses the thread boundary as a plain Uint8Array: viewed as a Buffer again, not copied.
      const gzip = result.bodyGzip;
      return {
        records: fromColumns(result.columns),
        bodySha256: result.bodySha256,
        ...(gzip && { bodyGzip: Buffer.from(gzip.buffer, gzip.byteOffset, gzip.byteLength) }),
        thread: 'worker',
      };
    },
  };
}
