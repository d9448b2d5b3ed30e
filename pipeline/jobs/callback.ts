import { scalarLines } from '../../core/logger.ts';
import { CALLBACK_ID_HEADER, withCallbackId } from '../../core/payments/callback-fields.ts';
import { signedCallbackBody } from '../../core/signatures.ts';
import { CALLBACK_QUEUE, callbackDeferralJobId, callbackJobId } from '../../core/queues.ts';
import type { AttemptVerdict } from '../../core/store/index.ts';
import type { CallbackJob } from '../../schemas/index.ts';
import { nextAttemptAt } from '../callbacks/schedule.ts';
import type { JobDefinition } from './types.ts';

/** How long an order stays locked after another of its callbacks was busy, before looking again. */
const BUSY_RETRY_MS = 1000;

/**
 * One delivery attempt of a direct callback (section 6): the fields signed with the agency's current key
 * (5.3, callback rule), POSTed form-encoded by the SSRF-safe client. Any 2xx acknowledges; 410 stops; any
 * other answer or failure is tried again on the schedule, and given up (dead) past the horizon; an address
 * the SSRF policy refuses is dead at once. Every attempt is recorded (the answer's excerpt only when not
 * 2xx), and carries the callback's stable id (at-least-once delivery: a crash after the merchant answered
 * sends it again). A callback superseded by a newer status, or already finished, is not sent.
 */
export const callbackJob: JobDefinition<CallbackJob> = {
  name: 'callback',
  handles: (queue) => queue === CALLBACK_QUEUE,
  jobId: callbackJobId,
  payloadSchema: 'https://schemas.amil.my/jobs/callback-job.json',
  // A thrown error (the store, the agency's key) retries the attempt; a merchant's refusal is an attempt.
  retry: { horizonMs: (pipeline) => pipeline.retryHorizonMs.callback },
  // Deliveries wait on merchants' servers, not on this process: many may be in flight at once.
  concurrency: 32,
  async process(data, deps, context) {
    const id = data.callbackId;
    const started = deps.clock.now();
    const leaseUntil = new Date(started.getTime() + deps.config.callbacks.timeoutMs + 5000).toISOString();
    const claim = await deps.store.callbacks.claim(id, started.toISOString(), leaseUntil);
    if ('refused' in claim) {
      if (claim.refused === 'busy') {
        const later = new Date(started.getTime() + BUSY_RETRY_MS).toISOString();
        await deps.store.callbacks.defer(
          id,
          callbackDeferralJobId(id, started),
          started.toISOString(),
          later,
        );
      }
      return;
    }
    const callback = claim.claimed;
    // The row id is the callback's id: the same on every attempt, so the merchant can deduplicate on it.
    const fields = withCallbackId(JSON.parse(callback.fields) as Record<string, string>, String(id));
    const body = signedBody(claim.apiKey, fields);
    const result = await deps.callbacks.postForm(callback.url, body, { [CALLBACK_ID_HEADER]: String(id) });
    const finished = deps.clock.now();
    const code = result.statusCode;
    let verdict: AttemptVerdict;
    if (code !== undefined && code >= 200 && code < 300) verdict = { state: 'delivered' };
    else if (code === 410) verdict = { state: 'gone' };
    // The address policy will refuse the same destination tomorrow: retrying for days only hides it.
    else if (result.forbidden) verdict = { state: 'dead' };
    else {
      const next = nextAttemptAt(deps.config.callbacks, new Date(callback.createdAt), finished);
      verdict = next
        ? {
            state: 'queued',
            nextAttemptAt: next.toISOString(),
            jobId: callbackJobId(id, callback.attempts + 1),
          }
        : { state: 'dead' };
    }
    await deps.store.callbacks.finishAttempt(
      id,
      {
        at: started.toISOString(),
        statusCode: code ?? null,
        latencyMs: result.latencyMs,
        error: result.error ?? null,
        // A 2xx body is the merchant's page for a payer, maybe personal; only a refusal's excerpt helps ops.
        responsePrefix: verdict.state === 'delivered' ? '' : result.responsePrefix,
      },
      verdict,
      // The job's outbox row is completed with the attempt: one write per finished delivery (issue 17).
      context?.completes,
    );
    // A line per delivery, of scalars only (no field a redaction path names): written without redaction.
    const lines = scalarLines(deps.logger);
    const log = {
      order_no: callback.orderNo,
      callback_id: id,
      status: callback.status,
      http_status: code,
      verdict: verdict.state,
    };
    if (verdict.state === 'delivered') lines.info(log, 'callback delivered');
    else lines.warn({ ...log, error: result.error }, 'callback not acknowledged');
    return { outboxCompleted: context?.completes !== undefined };
  },
};

/**
 * The form body: the fields, and their signature when the agency has an API key (all but legacy ones). The
 * key comes with the lease (read in the same statement: no round trip of its own, decision 195).
 */
function signedBody(apiKey: string | undefined, fields: Record<string, string>): string {
  return apiKey === undefined ? new URLSearchParams(fields).toString() : signedCallbackBody(fields, apiKey);
}
