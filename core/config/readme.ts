/**
 * The README's configuration table, derived from the configuration table (test/docs.test.ts fails when the
 * README is stale). Rewrite it with: npx tsx core/config/readme.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { variablesOf } from './load.ts';
import { SETTINGS } from './variables.ts';

/** One documented environment variable, as its README row shows it (Markdown). */
export interface EnvVar {
  name: string;
  default: string;
  meaning: string;
}

/** Every variable the configuration reads, in the README's order. */
export const ENV_VARS: readonly EnvVar[] = variablesOf(SETTINGS).map((v) => ({
  name: v.name,
  default: v.readme,
  meaning: v.doc,
}));

/** The README's configuration table in Markdown (Prettier pads it). */
export function configurationTable(): string {
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    row(['variable', 'default', 'meaning']),
    row(['---', '---', '---']),
    ...ENV_VARS.map((v) => row([`\`${v.name}\``, v.default, v.meaning])),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');
  const readme = readFileSync(file, 'utf8');
  const start = readme.indexOf('| variable');
  const end = readme.indexOf('\n\n', start);
  writeFileSync(file, readme.slice(0, start) + configurationTable() + readme.slice(end));
  console.log('README.md: configuration table rewritten; run npx prettier --write README.md');
}
