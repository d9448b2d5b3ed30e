/**
 * The body of a QR rendering worker thread (piscina): renders one PNG off the web process's event loop.
 * A too-dense code comes back as a value, since an error class does not survive the thread boundary.
 */
import { threadId } from 'node:worker_threads';
import { QrTooDenseError, renderQrPng } from './png.ts';

export interface RenderTask {
  text: string;
  size: number;
}

export type RenderResult =
  { ok: true; png: Uint8Array; threadId: number } | { ok: false; minimumSize: number };

/** Renders the PNG of `task.text` at `task.size` pixels. */
export default function render(task: RenderTask): RenderResult {
  try {
    return { ok: true, png: renderQrPng(task.text, task.size), threadId };
  } catch (err) {
    if (err instanceof QrTooDenseError) return { ok: false, minimumSize: err.minimumSize };
    throw err;
  }
}
