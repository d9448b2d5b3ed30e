import { isMainThread } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { QrTooDenseError } from './limits.ts';
import type { RenderResult, RenderTask } from './render-worker.ts';
import { isQueueFull, threadPool } from '../thread-pool.ts';

/** Too many renders are already queued: the caller answers 503 and the client retries later. */
export class QrRendererBusyError extends Error {
  constructor() {
    super('every QR rendering thread is busy and the queue is full');
    this.name = 'QrRendererBusyError';
  }
}

/** Renders QR PNGs on worker threads, behind a bounded cache; one per process, closed on shutdown. */
export interface QrRenderer {
  /** The PNG of `text` at `size` pixels; throws QrTooDenseError or QrRendererBusyError. */
  render(text: string, size: number): Promise<Buffer>;
  /** What it did so far: renders on a worker thread, answers from the cache, worker thread ids seen. */
  stats(): { rendered: number; cached: number; offMainThread: boolean };
  /** Stops the worker threads (in-flight renders finish first). */
  close(): Promise<void>;
}

export interface QrRendererOptions {
  /** Worker threads (at least 1). */
  threads: number;
  /** Most bytes of PNGs kept in the cache. */
  cacheBytes: number;
}

// A queue longer than this per thread means renders wait seconds: refuse instead of piling up memory.
const QUEUE_PER_THREAD = 32;
// A worker idle this long exits, so a process that stopped rendering holds no threads.
const IDLE_TIMEOUT_MS = 30_000;

/**
 * A QR renderer over a piscina pool created on first use (a process that never renders starts no thread).
 * The worker file is TypeScript: worker threads get the parent's loader flags (`--import tsx` under tsx,
 * `node --import tsx` and `npm start`), and the flag is added when tsx was registered in-process instead
 * (the `amil` shim); core/worker-exec-argv.ts.
 */
export function createQrRenderer(options: QrRendererOptions): QrRenderer {
  let pool: Piscina<RenderTask, RenderResult> | undefined;
  let closed = false;
  const cache = new Map<string, Buffer>();
  let cacheSize = 0;
  const inFlight = new Map<string, Promise<Buffer>>();
  const counts = { rendered: 0, cached: 0, offMainThread: true };

  function poolOf(): Piscina<RenderTask, RenderResult> {
    if (closed) throw new Error('the QR renderer is closed');
    pool ??= threadPool<RenderTask, RenderResult>(new URL('./render-worker.ts', import.meta.url), {
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: IDLE_TIMEOUT_MS,
      maxQueue: options.threads * QUEUE_PER_THREAD,
    });
    return pool;
  }

  function remember(key: string, png: Buffer): void {
    if (png.length > options.cacheBytes) return;
    // Least recently used first: a Map iterates in insertion order, and a hit re-inserts its entry.
    for (const [oldKey, old] of cache) {
      if (cacheSize + png.length <= options.cacheBytes) break;
      cache.delete(oldKey);
      cacheSize -= old.length;
    }
    cache.set(key, png);
    cacheSize += png.length;
  }

  async function renderOnPool(key: string, text: string, size: number): Promise<Buffer> {
    let result: RenderResult;
    try {
      result = await poolOf().run({ text, size });
    } catch (err) {
      if (isQueueFull(err)) throw new QrRendererBusyError();
      throw err;
    }
    if (!result.ok) throw new QrTooDenseError(result.minimumSize);
    counts.rendered += 1;
    if (isMainThread && result.threadId === 0) counts.offMainThread = false;
    const png = Buffer.from(result.png.buffer, result.png.byteOffset, result.png.byteLength);
    remember(key, png);
    return png;
  }

  return {
    render(text, size) {
      const key = `${size}\n${text}`;
      const hit = cache.get(key);
      if (hit) {
        cache.delete(key);
        cache.set(key, hit);
        counts.cached += 1;
        return Promise.resolve(hit);
      }
      // Many clients asking for the same new code at once share one render.
      let pending = inFlight.get(key);
      if (!pending) {
        pending = renderOnPool(key, text, size).finally(() => inFlight.delete(key));
        inFlight.set(key, pending);
      }
      return pending;
    },
    stats: () => ({ ...counts }),
    async close() {
      closed = true;
      await pool?.close();
      pool = undefined;
    },
  };
}
