/**
 * A run's workbook as a file on this machine. On one machine (SQLite) it is the file the run wrote under
 * DATA_DIR. On several (PostgreSQL) the run's worker wrote it under its own DATA_DIR and the store keeps the
 * bytes: another machine (the web process serving a download, the worker mailing it) copies them into its
 * DATA_DIR at the same relative path the first time it needs them, checked against the run's SHA-256.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import type { Deps } from './deps.ts';
import type { ReconRunRow } from './store/index.ts';

/** The workbook's path on this machine, fetched from the store when only the store has it; undefined if gone. */
export async function localWorkbook(
  deps: Pick<Deps, 'config' | 'store'>,
  run: Pick<ReconRunRow, 'id' | 'file' | 'fileSha256' | 'fileBytes'>,
): Promise<string | undefined> {
  const file = path.resolve(deps.config.dataDir, run.file);
  if (existsSync(file) && statSync(file).size === run.fileBytes) return file;
  mkdirSync(path.dirname(file), { recursive: true });
  // A name of its own per copy, renamed into place only whole and verified: two requests fetching the same
  // workbook at once each write their own, and the file under the final name is never half written.
  const partial = `${file}.${randomUUID()}.part`;
  const hash = createHash('sha256');
  let bytes = 0;
  const counted = new Transform({
    transform(piece: Buffer, _encoding, done) {
      hash.update(piece);
      bytes += piece.length;
      done(null, piece);
    },
  });
  try {
    await pipeline(Readable.from(deps.store.reconRuns.workbook(run.id)), counted, createWriteStream(partial));
    if (bytes === 0) return undefined;
    const sha256 = hash.digest('hex');
    if (bytes !== run.fileBytes || sha256 !== run.fileSha256)
      throw new Error(`the stored workbook of run ${run.id} does not match its SHA-256 (${bytes} bytes)`);
    renameSync(partial, file);
    return file;
  } finally {
    rmSync(partial, { force: true });
  }
}
