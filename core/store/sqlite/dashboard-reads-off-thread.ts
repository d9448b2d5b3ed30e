/**
 * The merchant dashboard's reads on SQLite, run on threads of their own (decision 244): each read goes to a
 * piscina thread holding its own connection to the file (dashboard-read-worker.ts), so a slow one (a year
 * of postings filtered by an exception code, a deep page) costs its own request time, never the event
 * loop's. The exports' stream reads its chunks of 1,000 rows there too, one task a chunk (a filter that few
 * payments match can make a chunk's statement look at a year of them).
 */
import type { Piscina } from 'piscina';
import type { DashboardReadsRepository } from '../dashboard-reads.ts';
import { STORE_UNREACHABLE } from '../outage.ts';
import { isQueueFull, threadPool } from '../../thread-pool.ts';
import type { ReadResult, ReadTask, ThreadRead } from './dashboard-read-worker.ts';
import { EXPORT_CHUNK, type SqliteDashboardReads } from './dashboard-reads.ts';
import { seekRows } from '../keyset.ts';
import type { PaymentRow } from '../orders.ts';

/**
 * Threads at most. Two: one slow read leaves another thread for the next page. One stays started once the
 * first read came (starting one, loading the modules, took about 130 ms here), the second exits after a
 * minute idle.
 */
const READ_THREADS = 2;
const IDLE_TIMEOUT_MS = 60_000;
/**
 * Reads waiting for a thread at most. Past it a read is refused as a busy store is (503 with Retry-After):
 * someone sending slow pages over and over makes the dashboard answer "try again", not a queue that grows
 * without end.
 */
const QUEUED_READS = 32;

export type ClosableDashboardReads = DashboardReadsRepository & { close(): Promise<void> };

/** The dashboard's reads of the SQLite file `file`, on threads. */
export function dashboardReadsOffThread(file: string): ClosableDashboardReads {
  let pool: Piscina<ReadTask, ReadResult> | undefined;
  const run = async (method: ThreadRead, args: unknown[]): Promise<unknown> => {
    pool ??= threadPool<ReadTask, ReadResult>(new URL('./dashboard-read-worker.ts', import.meta.url), {
      minThreads: 1,
      maxThreads: READ_THREADS,
      idleTimeout: IDLE_TIMEOUT_MS,
      maxQueue: QUEUED_READS,
      workerData: { file },
    });
    const result = await pool.run({ method, args }).catch((err: unknown) => {
      if (isQueueFull(err))
        throw Object.assign(new Error('every dashboard read thread is busy and its queue is full'), {
          code: STORE_UNREACHABLE,
        });
      throw err;
    });
    if (result.ok) return result.value;
    throw Object.assign(new Error(result.message), result.code === undefined ? {} : { code: result.code });
  };
  const onThread = <M extends ThreadRead>(method: M): SqliteDashboardReads[M] =>
    ((...args: unknown[]) => run(method, args)) as SqliteDashboardReads[M];
  const paymentsAfter = onThread('paymentsAfter');
  return {
    overview: onThread('overview'),
    paymentsPage: onThread('paymentsPage'),
    // Only the last row's key crosses to the thread for the next chunk.
    paymentRows: (filter) =>
      seekRows<PaymentRow>(
        (after, limit) =>
          paymentsAfter(filter, after && { createdAt: after.createdAt, orderNo: after.orderNo }, limit),
        EXPORT_CHUNK,
      ),
    order: onThread('order'),
    postingsPage: onThread('postingsPage'),
    postingCodes: onThread('postingCodes'),
    callbacksPage: onThread('callbacksPage'),
    runs: onThread('runs'),
    run: onThread('run'),
    async close() {
      await pool?.destroy();
    },
  };
}
