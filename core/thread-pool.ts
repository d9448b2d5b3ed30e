/**
 * Piscina pools of worker threads as amil makes them (the webhook's preparing threads, the QR renderer, the
 * dashboard's reads on SQLite): the worker is a TypeScript module, started with the parent's loader flags
 * only (worker-exec-argv.ts), and a task refused because the pool's queue is full is recognised the same
 * way everywhere.
 */
import { Piscina } from 'piscina';
import { workerExecArgv } from './worker-exec-argv.ts';

type PoolOptions = Omit<NonNullable<ConstructorParameters<typeof Piscina>[0]>, 'filename' | 'execArgv'>;

/** A pool running the module at `worker` (its URL) on threads started as workerExecArgv says. */
export function threadPool<T, R>(worker: URL, options: PoolOptions): Piscina<T, R> {
  return new Piscina<T, R>({ ...options, filename: worker.href, execArgv: workerExecArgv() });
}

/** Whether `err` is piscina's refusal of a task because every thread is busy and the queue is full. */
export function isQueueFull(err: unknown): boolean {
  return err instanceof Error && /queue is at limit/i.test(err.message);
}
