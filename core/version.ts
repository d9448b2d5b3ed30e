import { readFileSync } from 'node:fs';

/** The package version, reported by /api/version and the OpenAPI document. */
export const version: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** When this process started. */
export const startedAt: string = new Date().toISOString();

/** The git commit of the checkout this runs from, when it is one (best effort, read once). */
export const commit: string | null = readCommit();

function readCommit(): string | null {
  try {
    const head = readFileSync(new URL('../.git/HEAD', import.meta.url), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    return ref ? readFileSync(new URL(`../.git/${ref}`, import.meta.url), 'utf8').trim() : null;
  } catch {
    return null;
  }
}
