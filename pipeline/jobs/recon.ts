import { localWorkbook } from '../../core/recon-workbook.ts';
import path from 'node:path';
import type { Deps } from '../../core/deps.ts';
import { withoutAddresses } from '../../core/email.ts';
import {
  RECON_EMAIL_QUEUE,
  RECON_NIGHTLY_QUEUE,
  reconEmailJobId,
  reconNightlyJobId,
} from '../../core/queues.ts';
import type { ReconEmailJob, ReconNightlyJob } from '../../schemas/index.ts';
import { TEST_SINK } from '../../core/store/index.ts';
import { businessDate, prevDay } from '../../core/time.ts';
import { reconEmail } from '../../reports/reconciliation/email.ts';
import { asOfNow, NotReadyError, reconSinks, recipientsOf, runReconciliation } from '../recon/run-day.ts';
import { PermanentJobError, type JobDefinition } from './types.ts';
import { domainOf } from './receipt.ts';

/**
 * The nightly run: one workbook per agency (and the bank's live-test report) for the day. A sink whose
 * nightly run exists is skipped, so the job may run twice. A sink the pipeline has not caught up with
 * fails the job after the others are done, and the retry picks it up.
 */
export const reconNightlyJob: JobDefinition<ReconNightlyJob> = {
  name: 'recon-nightly',
  handles: (queue) => queue === RECON_NIGHTLY_QUEUE,
  jobId: reconNightlyJobId,
  payloadSchema: 'https://schemas.amil.my/jobs/recon-nightly-job.json',
  retry: { horizonMs: (pipeline) => pipeline.retryHorizonMs['recon-nightly'] },
  async process(data: ReconNightlyJob, deps: Deps): Promise<void> {
    const day = data.day ?? prevDay(businessDate(deps.clock.now()));
    const waiting: string[] = [];
    const asOf = await asOfNow(deps); // one as-of for every sink of the night
    for (const sink of await reconSinks(deps)) {
      if (await deps.store.reconRuns.hasNightly(sink, day)) continue;
      try {
        await runReconciliation(deps, { sink, day, trigger: 'nightly', asOf });
      } catch (error) {
        if (!(error instanceof NotReadyError)) throw error;
        waiting.push(`${sink}: ${error.message}`);
      }
    }
    if (waiting.length > 0) throw new NotReadyError(waiting.join('; '));
  },
};

/** What an attempt that never recorded its end shows: the process stopped, or the store could not write. */
const UNFINISHED = 'not finished: the process stopped or the store could not write after the attempt began';

/**
 * E-mails a run's workbook to its recipients; every attempt is recorded (before it is made), a sent run is
 * never re-sent by itself but after a crash between the server taking it and its record, under the same
 * Message-ID.
 */
export const reconEmailJob: JobDefinition<ReconEmailJob> = {
  name: 'recon-email',
  handles: (queue) => queue === RECON_EMAIL_QUEUE,
  jobId: reconEmailJobId,
  payloadSchema: 'https://schemas.amil.my/jobs/recon-email-job.json',
  retry: { horizonMs: (pipeline) => pipeline.retryHorizonMs['recon-email'] },
  async process(data: ReconEmailJob, deps: Deps): Promise<void> {
    const run = await deps.store.reconRuns.get(data.runId);
    if (!run) throw new PermanentJobError(`no reconciliation run ${String(data.runId)}`);
    const deliveries = await deps.store.reconRuns.deliveries(run.id);
    const sent = deliveries.filter((d) => d.outcome === 'sent').length;
    if (typeof data.sentBefore === 'number' ? sent > data.sentBefore : sent > 0) return;
    const isTest = run.sink === TEST_SINK;
    const agency = isTest ? undefined : await deps.store.agencies.get(run.sink);
    const recipients = recipientsOf(deps, agency?.settings.reportRecipients);
    if (recipients.length === 0) return;
    // A later run of the day corrects the earlier one: its e-mail says so, and follows it up in the thread.
    const previous = run.previousRun === null ? undefined : await deps.store.reconRuns.get(run.previousRun);
    const earlier = previous ? await deps.store.reconRuns.deliveries(previous.id) : [];
    const inReplyTo = earlier.find((d) => d.outcome === 'sent')?.messageId ?? undefined;
    const { subject, text, html } = reconEmail(run, agency?.name ?? 'the partner bank', isTest, previous);
    const workbook = await localWorkbook(deps, run);
    // Gone (removed by hand, or a store that lost it): retrying cannot bring it back; `amil recon run` can.
    if (workbook === undefined)
      throw new PermanentJobError(`the workbook of run ${run.id} is no longer kept`);
    const attempt = deliveries.length + 1;
    const at = deps.clock.now().toISOString();
    // One Message-ID per e-mail of the run (a re-mail is a new one): a resend after a crash between the
    // server taking it and its record is recognisably the same message, as a receipt's is.
    // The workbook's hash too: a restored backup or another installation reuses run ids, never workbooks.
    const messageId = `<recon.${run.id}.${sent + 1}.${run.fileSha256.slice(0, 12)}@${domainOf(deps.config.mail.from)}>`;
    // Recorded before it is sent, as not finished (decision 278): a store that cannot write stops the send
    // here, where it used to send at every retry and fail to record each.
    const delivery = await deps.store.reconRuns.recordDelivery({
      runId: run.id,
      recipients,
      attempt,
      at,
      outcome: 'failed',
      messageId,
      detail: UNFINISHED,
    });
    let mailed: Awaited<ReturnType<typeof deps.mailer.send>>;
    try {
      mailed = await deps.mailer.send({
        to: recipients,
        subject,
        text,
        html,
        messageId,
        ...(inReplyTo ? { inReplyTo } : {}),
        attachments: [
          {
            filename: path.basename(run.file),
            path: workbook,
            contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          },
        ],
      });
    } catch (error) {
      // Without the addresses a mail server quotes as it refuses them (the agency's staff), here and in
      // what is thrown (logged, and kept by BullMQ in Redis), as a receipt's failure is recorded.
      const reason = withoutAddresses((error as Error).message);
      // The send's error is the job's, whether or not the store can record it now.
      await deps.store.reconRuns
        .finishDelivery(delivery, { outcome: 'failed', messageId: null, detail: reason.slice(0, 500) })
        .catch(() => undefined);
      throw new Error(reason);
    }
    await deps.store.reconRuns.finishDelivery(delivery, {
      outcome: 'sent',
      messageId: mailed.messageId,
      detail: mailed.file ? path.relative(deps.config.dataDir, mailed.file) : null,
    });
  },
};
