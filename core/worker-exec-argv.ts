/**
 * What a worker thread (piscina) is started with: the parent's flags that load code, and nothing else.
 * Node refuses to start a Worker given a per-process flag (`--max-old-space-size`, `--stack-size`, any V8
 * heap or GC flag): passing the parent's whole execArgv made every large webhook batch and every QR
 * rendering a 500 in a process started with such a flag. Those flags are the process's anyway.
 */

/** Flags that load or resolve modules: a worker needs them to run the same TypeScript the same way. */
const LOADER_FLAGS = new Set([
  '--import',
  '--require',
  '-r',
  '--loader',
  '--experimental-loader',
  '--conditions',
  '-C',
]);

/** The loader flags of `parent` (either `--flag value` or `--flag=value`), with tsx's loader ensured. */
export function workerExecArgv(parent: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < parent.length; i += 1) {
    const arg = parent[i]!;
    const equals = arg.indexOf('=');
    if (!LOADER_FLAGS.has(equals < 0 ? arg : arg.slice(0, equals))) continue;
    if (equals >= 0) kept.push(arg);
    else if (i + 1 < parent.length) kept.push(arg, parent[(i += 1)]!);
  }
  // The worker files are TypeScript: a parent started some other way (a bundled build) still loads them.
  if (!kept.some((arg) => arg.includes('tsx'))) kept.push('--import', 'tsx');
  return kept;
}
