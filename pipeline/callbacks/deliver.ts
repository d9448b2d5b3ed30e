import type { Deps } from '../../core/deps.ts';
import { scalarLines } from '../../core/logger.ts';
import { CALLBACK_ID_HEADER, callbackWireId, withCallbackId } from '../../core/payments/callback-fields.ts';
import { signedCallbackBody } from '../../core/signatures.ts';
import type { AttemptVerdict, CallbackLease } from '../../core/store/index.ts';
import { nextAttemptAt } from './schedule.ts';

/** Deliveries at once per process: they wait on merchants' servers, not on this process. */
export const CALLBACK_CONCURRENCY = 32;

/** What an attempt needs of its lease beyond the callback timeout: its finish, and clocks a little apart. */
export const LEASE_MARGIN_MS = 5000;

/**
 * One delivery attempt of a leased direct callback (section 6): the fields signed with the agency's key read
 * with the lease (5.3, callback rule), POSTed form-encoded by the SSRF-safe client. Any 2xx acknowledges; 410
 * stops; any other answer or failure is tried again on the schedule (the callback's next_attempt_at), and
 * given up (dead) past the horizon; an address the SSRF policy refuses is dead at once. Every attempt is
 * recorded (the answer's excerpt only when not 2xx), and carries the callback's stable id (at-least-once
 * delivery: a crash after the merchant answered sends it again). A lease with too little time left for a
 * whole attempt (it waited too long in this process) is not used: another process may take the callback once
 * it ends, and two attempts at once could reach the merchant out of order. A callback that cannot be sent at
 * all (its stored fields unreadable) is given up at once, with the reason as its attempt. Rejects only when
 * the store cannot record the attempt: the lease then runs out and the callback is leased again.
 */
export async function deliverCallback(
  deps: Deps,
  lease: CallbackLease,
): Promise<'attempted' | 'lease ran out'> {
  const { callback } = lease;
  const id = callback.id;
  const started = deps.clock.now();
  const attemptMs = deps.config.callbacks.timeoutMs + LEASE_MARGIN_MS;
  if (started.getTime() + attemptMs > Date.parse(lease.leaseUntil)) return 'lease ran out';
  const wireId = callbackWireId(callback.orderNo, id);
  let body: string;
  try {
    // The same on every attempt, so the merchant can deduplicate on it.
    const fields = withCallbackId(JSON.parse(callback.fields) as Record<string, string>, wireId);
    body = signedBody(lease.apiKey, fields);
  } catch (err) {
    // The error's name only: a parser's message quotes the text it read, the payer's fields.
    const error = `the callback cannot be built: ${(err as Error).name}`;
    const attempt = { at: started.toISOString(), statusCode: null, latencyMs: 0, error, responsePrefix: '' };
    await deps.store.callbacks.finishAttempt(id, attempt, { state: 'dead' }, lease.leaseUntil);
    scalarLines(deps.logger).warn(
      { order_no: callback.orderNo, callback_id: id, error },
      'callback given up',
    );
    return 'attempted';
  }
  const result = await deps.callbacks.postForm(callback.url, body, { [CALLBACK_ID_HEADER]: wireId });
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
    lease.leaseUntil,
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
  return 'attempted';
}

/**
 * The form body: the fields, and their signature when the agency has an API key (all but legacy ones). The
 * key comes with the lease (read in the same statement: no round trip of its own, decision 195).
 */
function signedBody(apiKey: string | undefined, fields: Record<string, string>): string {
  return apiKey === undefined ? new URLSearchParams(fields).toString() : signedCallbackBody(fields, apiKey);
}
