import type { TestApp } from '../helpers.ts';

/** Counts the runtimes' own completions of outbox rows (what a job that completes its row makes unneeded). */
export function countRuntimeMarks(app: TestApp): { count: () => number } {
  const outbox = app.deps.store.outbox;
  const sent = outbox.markSent.bind(outbox);
  const done = outbox.markDone.bind(outbox);
  let marks = 0;
  outbox.markSent = async (id, now) => {
    marks += 1;
    return sent(id, now);
  };
  outbox.markDone = async (jobId, now) => {
    marks += 1;
    return done(jobId, now);
  };
  return { count: () => marks };
}
