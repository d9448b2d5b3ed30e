// Runs every test/**/*.test.ts through node:test with tsx. Fails when it finds none: on Node 20,
// `tsx --test` with no files silently runs nothing, and a green run that tested nothing is a lie.
import { readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const filter = process.argv.slice(2);
const files = readdirSync(root, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith('.test.ts'))
  .map((entry) => path.relative(process.cwd(), path.join(entry.parentPath ?? entry.path, entry.name)))
  .filter((file) => filter.length === 0 || filter.some((f) => file.includes(f)))
  .sort();

if (files.length === 0) {
  console.error(`No test files found under ${root}${filter.length ? ` matching ${filter.join(', ')}` : ''}.`);
  process.exit(1);
}

// The browser tests' screenshots (test/.screenshots/, gitignored) are of this run only. Emptied here, once,
// not by each test file: the files run in parallel and would delete each other's pictures.
rmSync(path.join(root, '.screenshots'), { recursive: true, force: true });

const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test' },
});
process.exit(result.status ?? 1);
