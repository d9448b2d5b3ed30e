import type { Deps } from '../../core/deps.ts';
import { scalarLines } from '../../core/logger.ts';
import { CALLBACK_ID_HEADER, withCallbackId } from '../../core/payments/callback-fields.ts';
import { signedCallbackBody } from '../../core/signatures.ts';
import type { AttemptVerdict, CallbackLease } from '../../core/store/index.ts';
import { nextAttemptAt } from './schedule.ts';

/** Deliveries at once per process: they wait on merchants' servers, not on this process. */
export const CALLBACK_CONCURRENCY = 32;

/**
 * One delivery attempt of a leased direct callback (section 6): the fields signed with the agency's key read
 * with the lease (5.3, callback rule), POSTed form-encoded by the SSRF-safe client. Any 2xx acknowledges; 410
 * stops; any other answer or failure is tried again on the schedule (the callback's next_attempt_at), and
 * given up (dead) past the horizon; an address the SSRF policy refuses is dead at once. Every attempt is
 * recorded (the answer's excerpt only when not 2xx), and carries the callback's stable id (at-least-once
 * delivery: a crash after the merchant answered sends it again). Rejects only when the store cannot record
 * the attempt: the lease then runs out and the callback is leased again.
 */
export async function deliverCallback(deps: Deps, lease: CallbackLease): Promise<void> {
  const { callback } = lease;
  const id = callback.id;
  const started = deps.clock.now();
  // The row id is the callback's id: the same on every attempt, so the merchant can deduplicate on it.
  const fields = withCallbackId(JSON.parse(callback.fields) as Record<string, string>, String(id));
  const body = signedBody(lease.apiKey, fields);
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
    verdict = next ? { state: 'queued', nextAttemptAt: next.toISOString() } : { state: 'dead' };
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
}

/**
 * The form body: the fields, and their signature when the agency has an API key (all but legacy ones). The
 * key comes with the lease (read in the same statement: no round trip of its own, decision 195).
 */
function signedBody(apiKey: string | undefined, fields: Record<string, string>): string {
  return apiKey === undefined ? new URLSearchParams(fields).toString() : signedCallbackBody(fields, apiKey);
}
