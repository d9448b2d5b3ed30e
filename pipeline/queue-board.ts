import type { Middleware } from 'koa';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { KoaAdapter } from '@bull-board/koa';
import type { Deps } from '../core/deps.ts';
import { requireAdmin } from '../core/http/admin-auth.ts';
import { openQueues } from './bullmq/queues.ts';
import { pipelineQueueNames } from './queues.ts';

export const QUEUE_BOARD_PATH = '/admin/queues';

/** Job data shown on the board: ids only. Payloads hold no payer data today; this keeps it that way. */
const SHOWN_FIELDS = ['batchId', 'sink'];

/**
 * Bull Board for the pipeline queues at /admin/queues, behind the admin password, read-only unless
 * QUEUE_BOARD_WRITABLE. Undefined when there is nothing to show (no Redis) or no admin password.
 */
export function queueBoard(deps: Deps): { middleware: Middleware; close(): Promise<void> } | undefined {
  const { redisUrl, adminPassword, queueBoardWritable } = deps.config;
  if (!redisUrl || !adminPassword) return undefined;
  const queues = openQueues(deps);
  const adapters = pipelineQueueNames(deps.config).map((name) => {
    const adapter = new BullMQAdapter(queues.get(name), { readOnlyMode: !queueBoardWritable });
    adapter.setFormatter('data', (data: unknown) =>
      Object.fromEntries(
        Object.entries((data ?? {}) as Record<string, unknown>).filter(([key]) => SHOWN_FIELDS.includes(key)),
      ),
    );
    return adapter;
  });
  const serverAdapter = new KoaAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({ queues: adapters, serverAdapter });
  const guard = requireAdmin(adminPassword);
  // Its typings come from an older @types/koa of its own; at run time it is a plain Koa middleware.
  const board = serverAdapter.registerPlugin() as unknown as Middleware;
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path === QUEUE_BOARD_PATH || ctx.path.startsWith(`${QUEUE_BOARD_PATH}/`)) {
      await guard(ctx, async () => {
        await board(ctx, next);
      });
    } else {
      await next();
    }
  };
  return { middleware, close: () => queues.close() };
}
