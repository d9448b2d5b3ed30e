/**
 * What a bank posting may become (spec section 3), judged the same on both engines: only a `pending`
 * posting may move, only to `success` or `failed`, and nothing but `status` and `time` may change with it.
 */

/** The stored posting's fields a transition is judged on. */
export interface TransitionSubject {
  status: 'success' | 'pending' | 'failed';
  /** Its current version, canonical JSON. */
  record: string;
}

/** Why an incoming version may not replace the stored one, or undefined when it may. */
export function transitionRefusal(
  current: TransitionSubject,
  incoming: { status: TransitionSubject['status']; canonical: string },
): string | undefined {
  if (current.status !== 'pending') return `stored status is ${current.status}, which is final`;
  if (incoming.status === 'pending') return 'a pending posting was resent with different details';
  if (identityOf(current.record) !== identityOf(incoming.canonical)) {
    return `status ${current.status} -> ${incoming.status} also changes fields other than status and time`;
  }
  return undefined;
}

/** Canonical JSON of a record without `status` and `time`: what must not change in an update. */
function identityOf(canonicalRecord: string): string {
  const { status: _status, time: _time, ...rest } = JSON.parse(canonicalRecord) as Record<string, unknown>;
  return JSON.stringify(rest);
}
