import type { Middleware } from 'koa';
import type { Deps } from '../core/deps.ts';
import { requireAdmin } from '../core/http/admin-auth.ts';

export const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * Bull Board for the pipeline queues at /admin/queues, behind the admin password, read-only unless
 * QUEUE_BOARD_WRITABLE. Undefined when there is nothing to show (no Redis) or no admin password. The board
 * (Bull Board, its templates, BullMQ's queues) is loaded and opened by its first request past the password,
 * not by every web process at start (decision 257).
 */
export function queueBoard(deps: Deps): { middleware: Middleware; close(): Promise<void> } | undefined {
  const { redisUrl, adminPassword } = deps.config;
  if (!redisUrl || !adminPassword) return undefined;
  let built: ReturnType<typeof build> | undefined;
  const build = async () => (await import('./queue-board-ui.ts')).buildQueueBoard(deps, QUEUE_BOARD_PATH);
  const guard = requireAdmin(adminPassword);
  const middleware: Middleware = async (ctx, next) => {
    if (ctx.path === QUEUE_BOARD_PATH || ctx.path.startsWith(`${QUEUE_BOARD_PATH}/`)) {
      await guard(ctx, async () => {
        const { board } = await (built ??= build());
        await board(ctx, next);
      });
    } else {
      await next();
    }
  };
  return { middleware, close: async () => (built ? (await built).close() : undefined) };
}
