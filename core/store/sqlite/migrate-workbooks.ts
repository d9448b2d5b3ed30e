/**
 * The reconciliation workbooks of an embedded installation, moved by `amil migrate-store`. On SQLite a
 * run's workbook is a file in DATA_DIR; on PostgreSQL it is kept in recon_files with its run (decision
 * 188). Each file is checked against its run's SHA-256 before the copy, and read back from PostgreSQL and
 * checked again before the commit (decision 207).
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { PIECE_BYTES } from '../pg/recon-runs.ts';
import type { PgTx } from '../pg/pool.ts';

/** A run's workbook as the run recorded it: the file relative to DATA_DIR, its size and SHA-256. */
export interface RunWorkbook {
  runId: number;
  sink: string;
  day: string;
  file: string;
  bytes: number;
  sha256: string;
}

/** A run whose workbook is not in DATA_DIR as recorded: `problem` says how ("is missing", ...). */
export interface MissingWorkbook extends RunWorkbook {
  problem: string;
}

/** One workbook copied: as the run recorded it, as read from the file, and as PostgreSQL reads it back. */
export interface WorkbookCopy extends RunWorkbook {
  sourceSha256: string;
  targetBytes: number;
  targetSha256: string;
}

const INSERT_PIECE = 'INSERT INTO recon_files (run_id, seq, bytes) VALUES ($1, $2, $3)';
const READ_BACK = 'SELECT bytes FROM recon_files WHERE run_id = $1 ORDER BY seq';

async function sha256Of(pieces: AsyncIterable<Buffer>): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const piece of pieces) {
    hash.update(piece);
    bytes += piece.length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/**
 * Every run's workbook under `dataDir`, split into those whose file is there with the run's size and
 * SHA-256 (ready to copy) and those whose file is missing or holds other bytes.
 */
export async function checkWorkbooks(
  sqlite: Database.Database,
  dataDir: string,
): Promise<{ ready: RunWorkbook[]; missing: MissingWorkbook[] }> {
  const runs = sqlite
    .prepare<[], RunWorkbook>(
      `SELECT id AS runId, sink, business_date AS day, file, file_bytes AS bytes, file_sha256 AS sha256
       FROM recon_runs ORDER BY id`,
    )
    .all();
  const ready: RunWorkbook[] = [];
  const missing: MissingWorkbook[] = [];
  for (const run of runs) {
    const file = path.resolve(dataDir, run.file);
    if (!existsSync(file)) {
      missing.push({ ...run, problem: 'is missing' });
      continue;
    }
    const found = await sha256Of(createReadStream(file, { highWaterMark: PIECE_BYTES }));
    if (found.sha256 === run.sha256 && found.bytes === run.bytes) ready.push(run);
    else {
      const size = found.bytes === run.bytes ? '' : ` (${found.bytes} bytes, the run recorded ${run.bytes})`;
      missing.push({ ...run, problem: `does not match its run's SHA-256${size}` });
    }
  }
  return { ready, missing };
}

/** What a refusal names of each run whose workbook cannot be moved: "run 3 (LZS 2026-11-20): FILE is missing". */
export function describeMissing(missing: readonly MissingWorkbook[], shown = 10): string {
  const named = missing
    .slice(0, shown)
    .map((m) => `run ${m.runId} (${m.sink} ${m.day}): ${m.file} ${m.problem}`);
  if (missing.length > shown) named.push(`and ${missing.length - shown} more`);
  return named.join('; ');
}

/** A run's workbook as PostgreSQL holds it, a few pieces at a time (a few MiB however large the workbook). */
async function* heldPieces(tx: PgTx, runId: number): AsyncGenerator<Buffer> {
  for await (const rows of tx.cursor<{ bytes: Buffer }>(READ_BACK, [runId], 4))
    for (const row of rows) yield row.bytes;
}

/**
 * Each workbook as PostgreSQL already holds it (a move committed before, decision 260), read back without
 * copying: its target size and SHA-256 beside the run's (the file was checked against the run before).
 */
export async function readBackWorkbooks(
  tx: PgTx,
  workbooks: readonly RunWorkbook[],
): Promise<WorkbookCopy[]> {
  const held: WorkbookCopy[] = [];
  for (const workbook of workbooks) {
    const target = await sha256Of(heldPieces(tx, workbook.runId));
    held.push({
      ...workbook,
      // The file was checked against the run's SHA-256 before (or is missing: then compared is only PostgreSQL's).
      sourceSha256: workbook.sha256,
      targetBytes: target.bytes,
      targetSha256: target.sha256,
    });
  }
  return held;
}

/**
 * Copies each workbook under `dataDir` into recon_files in `tx`, in the pieces the store itself writes,
 * and reads it back: the caller commits only when every copy's three SHA-256 agree.
 */
export async function copyWorkbooks(
  tx: PgTx,
  dataDir: string,
  workbooks: readonly RunWorkbook[],
): Promise<WorkbookCopy[]> {
  const copies: WorkbookCopy[] = [];
  for (const workbook of workbooks) {
    let seq = 0;
    async function* inserted(): AsyncGenerator<Buffer> {
      for await (const piece of createReadStream(path.resolve(dataDir, workbook.file), {
        highWaterMark: PIECE_BYTES,
      }) as AsyncIterable<Buffer>) {
        await tx.run(INSERT_PIECE, [workbook.runId, seq++, piece]);
        yield piece;
      }
    }
    const source = await sha256Of(inserted());
    const target = await sha256Of(heldPieces(tx, workbook.runId));
    copies.push({
      ...workbook,
      sourceSha256: source.sha256,
      targetBytes: target.bytes,
      targetSha256: target.sha256,
    });
  }
  return copies;
}

/** True when a copy is the run's workbook on both sides: the file read and PostgreSQL's bytes. */
export function copiedWhole(copy: WorkbookCopy): boolean {
  return (
    copy.sourceSha256 === copy.sha256 && copy.targetSha256 === copy.sha256 && copy.targetBytes === copy.bytes
  );
}
