/** Bull Board over the pipeline's queues: loaded by pipeline/queue-board.ts with the board's first request. */
import type { Middleware } from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Deps } from '../core/deps.ts';
import { openQueues } from './bullmq/queues.ts';
import { pipelineQueueNames } from './queues.ts';

/** Job data shown on the board: ids only. Payloads hold no payer data today; this keeps it that way. */
const SHOWN_FIELDS = ['batchId', 'sink'];

/** The board's Koa middleware under `basePath`, and the queues it opened. */
export function buildQueueBoard(deps: Deps, basePath: string): { board: Middleware; close(): Promise<void> } {
  const queues = openQueues(deps);
  const adapters = pipelineQueueNames(deps.config).map((name) => {
    const adapter = new BullMQAdapter(queues.get(name), { readOnlyMode: !deps.config.queueBoardWritable });
    adapter.setFormatter('data', (data: unknown) =>
      Object.fromEntries(
        Object.entries((data ?? {}) as Record<string, unknown>).filter(([key]) => SHOWN_FIELDS.includes(key)),
      ),
    );
    return adapter;
  });
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(basePath);
  createBullBoard({ queues: adapters, serverAdapter });
  // Its typings come from an older @types/koa of its own; at run time it is a plain Koa middleware.
  const board = serverAdapter.registerPlugin() as unknown as Middleware;
  return { board, close: () => queues.close() };
}
