import { randomUUID } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Deps } from '../../core/deps.ts';
import { createDeps } from '../../core/bootstrap.ts';
import { fixedClock } from '../../core/clock.ts';
import { createLogger } from '../../core/logger.ts';
import { hashPassword } from '../../core/passwords.ts';
import { parseOffsetDateTime, klDayStartUtc, nextDay } from '../../core/time.ts';
import { sha256Hex } from '../../core/canonical-json.ts';
import type { AgencySettings, ArchivedPayment } from '../../core/store/index.ts';
import { openStore, TEST_SINK } from '../../core/store/index.ts';
import { ingestBankBatch } from '../../ingest/bank-webhook/service.ts';
import { createInProcessRuntime } from '../in-process-runtime.ts';
import { runReconciliation, type ReconRunResult } from './run-day.ts';

/** A day as a replay takes it: bodies in the order received, payments, and the agencies they belong to. */
export interface DayArchive {
  day: string;
  asOf: Date;
  batches: { file: string; partnerId: string; receivedAt: string; excerpt: boolean; body: Buffer }[];
  payments: ArchivedPayment[];
  agencies: { code: string; name: string; settings: AgencySettings }[];
}

interface Manifest {
  format: 'amil-day/1';
  day: string;
  asOf: string;
  batches: { file: string; partnerId: string; receivedAt: string; excerpt: boolean; sha256: string }[];
  payments: string;
  agencies: DayArchive['agencies'];
}

/** The default as-of of a day: the nightly run's time, 00:30 the next morning in Kuala Lumpur. */
export function defaultAsOf(day: string): Date {
  return new Date(new Date(klDayStartUtc(nextDay(day))).getTime() + 30 * 60_000);
}

/**
 * `amil export-day`: writes what a replay of the day needs as fixture files: `manifest.json`, the webhook
 * bodies under `batches/` (verbatim, or excerpts of earlier bodies) and `payments.json`. No API key.
 */
export async function exportDay(deps: Deps, day: string, asOf: Date, dir: string): Promise<Manifest> {
  const { batches, payments } = await deps.store.reconArchive.exportDay(day, asOf);
  mkdirSync(path.join(dir, 'batches'), { recursive: true });
  const entries = batches.map((batch, i) => {
    const file = `batches/${String(i + 1).padStart(4, '0')}${batch.excerpt ? '-excerpt' : ''}.json`;
    writeFileSync(path.join(dir, file), batch.body);
    return {
      file,
      partnerId: batch.partnerId,
      receivedAt: batch.receivedAt,
      excerpt: batch.excerpt,
      sha256: sha256Hex(batch.body),
    };
  });
  writeFileSync(path.join(dir, 'payments.json'), `${JSON.stringify(payments, null, 2)}\n`);
  const agencies = (await deps.store.agencies.list()).map((a) => ({
    code: a.code,
    name: a.name,
    settings: a.settings,
  }));
  const manifest: Manifest = {
    format: 'amil-day/1',
    day,
    asOf: asOf.toISOString(),
    batches: entries,
    payments: 'payments.json',
    agencies,
  };
  writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * Reads a day to replay from a directory: an export (with `manifest.json`), or plain webhook bodies such
 * as `fixtures/days/2026-11-20/0*.json`, posted in file-name order. Plain bodies carry no receipt time, so
 * each is taken as received at its latest record's time (never before the file before it), and the day
 * as of 00:30 the next morning unless `asOf` is given.
 */
export function readDayDir(
  dir: string,
  day: string,
  fallback: { asOf?: Date; agencies: DayArchive['agencies'] },
): DayArchive {
  const manifestFile = path.join(dir, 'manifest.json');
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    if (manifest.format !== 'amil-day/1') throw new Error(`${manifestFile}: not an amil day export`);
    if (manifest.day !== day) throw new Error(`${manifestFile} is the day ${manifest.day}, not ${day}`);
    return {
      day,
      asOf: fallback.asOf ?? new Date(manifest.asOf),
      batches: manifest.batches.map((b) => {
        const body = readFileSync(path.join(dir, b.file));
        if (sha256Hex(body) !== b.sha256)
          throw new Error(`${b.file} does not match its SHA-256 in the manifest`);
        return { ...b, body };
      }),
      payments: JSON.parse(readFileSync(path.join(dir, manifest.payments), 'utf8')) as ArchivedPayment[],
      agencies: manifest.agencies,
    };
  }
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.startsWith('expected') && f !== 'payments.json')
    .sort();
  if (files.length === 0) throw new Error(`${dir} has no webhook bodies (*.json) and no manifest.json`);
  let previous = new Date(klDayStartUtc(day)).getTime();
  const batches = files.map((file) => {
    const body = readFileSync(path.join(dir, file));
    const { transactions } = JSON.parse(body.toString('utf8')) as { transactions: { time: string }[] };
    const latest = Math.max(...transactions.map((t) => parseOffsetDateTime(t.time)?.getTime() ?? 0));
    previous = Math.max(previous, latest);
    return {
      file,
      partnerId: 'fixture-bank',
      receivedAt: new Date(previous).toISOString(),
      excerpt: false,
      body,
    };
  });
  const paymentsFile = path.join(dir, 'payments.json');
  return {
    day,
    asOf: fallback.asOf ?? defaultAsOf(day),
    batches,
    payments: existsSync(paymentsFile)
      ? (JSON.parse(readFileSync(paymentsFile, 'utf8')) as ArchivedPayment[])
      : [],
    agencies: fallback.agencies,
  };
}

/**
 * Runs the whole pipeline on a day in an isolated store (a temporary SQLite file, removed afterwards): each
 * body through the webhook's own ingest at its receipt time, normalise and fan-out, the payments, then the
 * workbook of every agency and the bank test report, written to `outDir`.
 */
export async function replayDay(
  base: Deps,
  archive: DayArchive,
  options: { outDir: string; sinks?: readonly string[]; onProgress?: (done: number, total: number) => void },
): Promise<ReconRunResult[]> {
  const work = mkdtempSync(path.join(tmpdir(), 'amil-replay-'));
  const clock = fixedClock(archive.batches[0]?.receivedAt ?? archive.asOf);
  const config = {
    ...base.config,
    dataDir: work,
    databaseFile: path.join(work, 'amil.db'),
    seedDemo: false,
    recon: { ...base.config.recon, dir: path.join(work, 'reconciliation') },
    mail: { ...base.config.mail, smtpUrl: undefined, dir: path.join(work, 'mail') },
  };
  // The replay's store is an SQLite file of its own, opened here whatever engine the process runs on, so a
  // replay can never write into the live database (with PostgreSQL, the live store is not a file at all).
  const store = openStore(config.databaseFile);
  const deps = createDeps({}, { config, clock, store, logger: createLogger('error', process.stderr) });
  try {
    for (const agency of archive.agencies) {
      await deps.store.agencies.create({ ...agency, apiKey: randomUUID(), now: clock.now() });
    }
    const hash = await hashPassword(randomUUID());
    for (const partnerId of new Set(archive.batches.map((b) => b.partnerId))) {
      await deps.store.partners.addPassword({ partnerId, label: 'replay', hash, now: clock.now() });
    }
    const total = archive.batches.length + 1;
    let done = 0;
    for (const batch of archive.batches) {
      clock.set(batch.receivedAt);
      const request = JSON.parse(batch.body.toString('utf8')) as unknown;
      if (!deps.validators.bankWebhookRequest(request)) {
        throw new Error(
          `${batch.file} is not a valid webhook body: ${JSON.stringify(deps.validators.bankWebhookRequest.errors())}`,
        );
      }
      await ingestBankBatch(deps, {
        partnerId: batch.partnerId,
        contentType: 'application/json',
        body: batch.body,
        request,
      });
      options.onProgress?.((done += 1), total);
    }
    await deps.store.reconArchive.importPayments(archive.payments);
    clock.set(archive.asOf);
    const relay = createInProcessRuntime(deps, { pollMs: 10, maxAttempts: 3, backoffMs: 10 });
    await relay.drain();
    await relay.stop();
    options.onProgress?.((done += 1), total);

    mkdirSync(options.outDir, { recursive: true });
    const sinks = options.sinks ?? [...archive.agencies.map((a) => a.code).sort(), TEST_SINK];
    const results: ReconRunResult[] = [];
    for (const sink of sinks) {
      results.push(
        await runReconciliation(deps, {
          sink,
          day: archive.day,
          trigger: 'replay',
          asOf: archive.asOf,
          dir: options.outDir,
        }),
      );
    }
    return results;
  } finally {
    await deps.callbacks.close();
    deps.mailer.close();
    await deps.store.close();
    rmSync(work, { recursive: true, force: true });
  }
}
