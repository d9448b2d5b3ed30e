/** Fault-injection helpers: a generated day posted to a real web process, and its ledger truth. */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { DEMO_PASSWORD } from '../helpers.ts';
import type { GeneratedDay } from './recon-day.ts';

/** Posts every batch of the generated day to the web process's bank webhook, in order. */
export async function postDay(url: string, generated: GeneratedDay): Promise<void> {
  for (const batch of generated.batches) {
    const response = await fetch(`${url}/api/bank/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-password': DEMO_PASSWORD },
      body: JSON.stringify({ transactions: batch.records }),
    });
    assert.equal(response.status, 200, await response.text());
  }
}

/** What the ledgers must hold, from the plan alone: per posting, its sink, versions and last status. */
export function ledgerTruth(generated: GeneratedDay): string[] {
  return generated.items
    .filter((item) => item.channel === 'bank')
    .map((item) => `${item.sink} ${item.id} x${item.versions.length} ${item.versions.at(-1)?.status}`)
    .sort();
}

/** What the ledgers hold, in the same shape (read on a connection of the test's own). */
export function ledgerNow(databaseFile: string): string[] {
  const db = new Database(databaseFile, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare<[], { line: string }>(
        `SELECT l.sink || ' ' || p.orderno || ' x' || count(*) || ' ' ||
           (SELECT status FROM ledger_entries m WHERE m.sink = l.sink AND m.posting_id = l.posting_id
            ORDER BY version DESC LIMIT 1) AS line
         FROM ledger_entries l JOIN bank_postings p ON p.id = l.posting_id
         GROUP BY l.sink, l.posting_id`,
      )
      .all()
      .map((r) => r.line)
      .sort();
  } finally {
    db.close();
  }
}

/** Waits until `check` is true, polling; returns how long it took, or fails after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

/** Whether two sorted line lists are equal. */
export const sameLines = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
