export type ReconTrigger = 'nightly' | 'manual' | 'replay';

/** A recorded run: one workbook of one sink's business day. */
export interface ReconRunRow {
  id: number;
  sink: string;
  businessDate: string;
  trigger: ReconTrigger;
  asOf: string;
  startedAt: string;
  finishedAt: string;
  fingerprint: string;
  file: string;
  fileSha256: string;
  fileBytes: number;
  inputCounts: Record<string, number>;
  totals: unknown;
  /** The run of the same day this one was compared with (`changes` are against it): the latest before it. */
  previousRun: number | null;
  changes: string | null;
}

export interface NewReconRun extends Omit<ReconRunRow, 'id' | 'previousRun'> {
  /**
   * The run `changes` were measured against (the latest when the run read it). Recorded as the previous
   * run, so a run recorded meanwhile (two re-runs of one day at once) is not named in its stead. Undefined:
   * the latest run when this one is recorded.
   */
  comparedWith?: number | null;
  /** Send the workbook by e-mail (through the outbox, in the run's own transaction). */
  email: boolean;
  /**
   * Where the workbook was written (absolute): an engine that keeps workbooks itself copies it in. Only a
   * record with no workbook behind it (a test of the records alone) leaves it out.
   */
  localFile?: string;
}

export interface ReconDelivery {
  runId: number;
  recipients: string[];
  attempt: number;
  at: string;
  outcome: 'sent' | 'failed';
  messageId: string | null;
  detail: string | null;
}

/** Reconciliation runs, their files and their e-mail deliveries. */
export interface ReconRunsRepository {
  /**
   * Records a finished run and, in the same transaction, the job that e-mails it. A sink's day has one
   * nightly run: recording another returns the first, unchanged (and queues no e-mail).
   */
  record(run: NewReconRun): Promise<ReconRunRow>;

  get(id: number): Promise<ReconRunRow | undefined>;

  /**
   * The run's workbook as the store keeps it, in order: PostgreSQL keeps it (several machines share it
   * through the database); SQLite yields nothing, its workbook being the file in DATA_DIR on its one machine.
   */
  workbook(runId: number): AsyncIterable<Buffer>;

  /** The latest run of a sink's day, if any. */
  latest(sink: string, day: string): Promise<ReconRunRow | undefined>;

  /** Whether a nightly run of that sink's day exists (the nightly job runs each day once). */
  hasNightly(sink: string, day: string): Promise<boolean>;

  /** Whether any nightly run was ever recorded: the store is an established installation's (decision 274). */
  anyNightly(): Promise<boolean>;

  /** Runs of a sink, newest day first, optionally within [firstDay, lastDay]. */
  list(filter: { sink?: string; firstDay?: string; lastDay?: string; limit: number }): Promise<ReconRunRow[]>;

  /**
   * Queues the run's workbook to be e-mailed again (the dashboard's re-mail), as a job of its own that
   * sends only while no e-mail of the run was sent since it was asked for: a job run twice sends once, and
   * a second click before it is sent asks for the same e-mail (the same job id).
   */
  requestRemail(runId: number, at: string): Promise<void>;

  recordDelivery(delivery: ReconDelivery): Promise<number>;

  /** Sets the outcome of an attempt recorded before it was made (the recon e-mail's, decision 278). */
  finishDelivery(id: number, end: Pick<ReconDelivery, 'outcome' | 'messageId' | 'detail'>): Promise<void>;

  /** Whether the run's e-mail was queued (not for a replay, a run recorded with no mail, no recipients). */
  emailQueued(runId: number): Promise<boolean>;

  deliveries(runId: number): Promise<ReconDelivery[]>;
}
