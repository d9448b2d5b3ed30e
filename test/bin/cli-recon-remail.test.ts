/** `amil recon remail`: the dashboard's re-mail from the ops CLI, run in-process over a temp DATA_DIR. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createDeps, seedDemoData } from '../../core/bootstrap.ts';
import { createLogger } from '../../core/logger.ts';
import { runProgram } from '../../bin/cli/program.ts';
import { RECON_EMAIL_QUEUE } from '../../core/queues.ts';
import { reconEmailJob } from '../../pipeline/jobs/recon.ts';
import { runReconciliation } from '../../pipeline/recon/run-day.ts';
import { onCleanup, tempDir } from '../helpers.ts';

function capture(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

test('recon remail queues a run’s e-mail again, sent once however often its job runs; an unknown run is refused', async (t) => {
  const env = { NODE_ENV: 'test', DATA_DIR: tempDir(t), SEED_DEMO: 'false' };
  const open = () => createDeps(env, { logger: createLogger('warn', capture().stream) });
  const deps = open();
  onCleanup(t, () => deps.store.close());
  await seedDemoData(deps.store, new Date());
  const { run } = await runReconciliation(deps, {
    sink: 'LZS',
    day: '2026-11-20',
    trigger: 'manual',
    asOf: new Date('2026-11-21T00:30:00+08:00'),
    mail: false,
  });
  const amil = async (...args: string[]) => {
    const stdout = capture();
    const stderr = capture();
    const code = await runProgram(['recon', ...args], {
      from: 'user',
      openDeps: open,
      stdout: stdout.stream,
      stderr: stderr.stream,
      readStdin: () => '',
    });
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  };

  const queued = await amil('remail', String(run.id));
  assert.deepEqual(queued, {
    code: 0,
    stdout: `run ${run.id} LZS 2026-11-20: e-mail queued again\n`,
    stderr: '',
  });
  const [row] = (await deps.store.outbox.pending(10, new Date('2099-01-01'))).filter(
    (r) => r.queue === RECON_EMAIL_QUEUE,
  );
  assert.equal(row?.jobId, `recon-email.${run.id}.again.1`);
  const payload = JSON.parse(row.payload) as { runId: number; sentBefore: number };
  assert.deepEqual(payload, { runId: run.id, sentBefore: 0 });
  // Asked twice before it is sent: the same job (the outbox ignores a repeated id).
  assert.equal((await amil('remail', String(run.id))).code, 0);
  assert.equal(
    (await deps.store.outbox.pending(10, new Date('2099-01-01'))).filter((r) => r.queue === RECON_EMAIL_QUEUE)
      .length,
    1,
  );
  await reconEmailJob.process(payload, deps);
  await reconEmailJob.process(payload, deps);
  const deliveries = await deps.store.reconRuns.deliveries(run.id);
  assert.deepEqual(
    deliveries.map((d) => [d.outcome, d.recipients]),
    [['sent', ['kewangan@lzs.example.my']]],
  );

  assert.deepEqual(await amil('remail', '999999'), {
    code: 1,
    stdout: '',
    stderr: 'amil: no reconciliation run 999999\n',
  });
  assert.equal((await amil('remail', 'run-1')).code, 2);
});
