// Runs every test/**/*.test.ts through node:test with tsx. Fails when it finds none: on Node 20,
// `tsx --test` with no files silently runs nothing, and a green run that tested nothing is a lie.
import { readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
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

// Node 20 runs availableParallelism() - 1 files at once: one at a time on a 2-core machine, where most
// files spend their time waiting (fsync, child processes, a browser, the network). One file more than
// there are cores keeps both busy (27 minutes to 15 on the 2-core machine, decision 257); capped, since
// each file may start its own PostgreSQL, Redis and browser. TEST_CONCURRENCY overrides it.
const concurrency = Number(process.env.TEST_CONCURRENCY) || Math.min(availableParallelism() + 1, 6);

const args = ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec'];
const result = spawnSync(process.execPath, [...args, ...files], {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test' },
});
process.exit(result.status ?? 1);
