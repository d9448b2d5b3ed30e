/**
 * What an agency's admin changes, from the ops CLI or the dashboard's API access page: the API key, the
 * callback hosts and the report recipients, checked the same way wherever they come from.
 */
import { randomUUID } from 'node:crypto';
import { isEmailAddress } from './email.ts';
import type { Store } from './store/index.ts';

/** Why a report recipient is refused, or undefined. */
export function recipientProblem(email: string): string | undefined {
  return isEmailAddress(email) ? undefined : `not an email: ${email}`;
}

/** Why a callback host (a host name or address, with an optional port) is refused, or undefined. */
export function callbackHostProblem(host: string): string | undefined {
  return /^[a-z0-9.-]{1,253}(:\d{1,5})?$/.test(host) ? undefined : `not a host: ${host}`;
}

/** Most entries of either list: a bounded settings document. */
export const MAX_LIST_ENTRIES = 50;

/**
 * A list of recipients or hosts as typed (commas, spaces or new lines between entries): the entries, or
 * the problems. Hosts are lower-cased (a returnUrl's host is compared lower-case).
 */
export function parseSettingList(
  kind: 'recipients' | 'callback-hosts',
  text: string,
): { values: string[] } | { problems: string[] } {
  const entries = text
    .split(/[\s,]+/)
    .map((v) => v.trim())
    .filter((v) => v !== '')
    .map((v) => (kind === 'callback-hosts' ? v.toLowerCase() : v));
  const values = [...new Set(entries)];
  const check = kind === 'recipients' ? recipientProblem : callbackHostProblem;
  const problems = values.flatMap((v) => check(v) ?? []);
  if (values.length > MAX_LIST_ENTRIES) problems.push(`at most ${MAX_LIST_ENTRIES} entries`);
  return problems.length > 0 ? { problems } : { values };
}

/** Replaces the agency's API key now (the old one stops working); the new key, or undefined if no agency. */
export async function rotateApiKey(store: Store, code: string, now: Date): Promise<string | undefined> {
  const apiKey = randomUUID();
  return (await store.agencies.rotateKey(code, apiKey, now)) ? apiKey : undefined;
}
