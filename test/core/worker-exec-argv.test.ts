import { test } from 'node:test';
import assert from 'node:assert/strict';
import { workerExecArgv } from '../../core/worker-exec-argv.ts';

test('worker threads get the parent’s loader flags and none of its per-process flags', () => {
  assert.deepEqual(
    workerExecArgv([
      '--max-old-space-size=2048',
      '--import',
      'tsx',
      '--stack-size=984',
      '--enable-source-maps',
    ]),
    ['--import', 'tsx'],
  );
  assert.deepEqual(workerExecArgv(['--import=tsx', '-r', './tracing.cjs', '--conditions=production']), [
    '--import=tsx',
    '-r',
    './tracing.cjs',
    '--conditions=production',
  ]);
  // Started without tsx (the CLI shim registers it in-process): the worker files still need it.
  assert.deepEqual(workerExecArgv(['--max-semi-space-size=64']), ['--import', 'tsx']);
  assert.deepEqual(
    workerExecArgv(['--require']),
    ['--import', 'tsx'],
    'a flag without its value is left out',
  );
});
