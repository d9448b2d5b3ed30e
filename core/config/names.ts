/** The closed sets configuration values are taken from. */

/** The three hosts of the interface; one process serves all of them. */
export const HOSTS = ['base', 'reports', 'pay'] as const;
export type HostName = (typeof HOSTS)[number];

/** Where a bank agency code routes: a zakat agency's code, or the live-test sink. */
export type BankRoute = { kind: 'agency'; agency: string } | { kind: 'test' };

/** The acquirers amil can send payments to (docs/acquirers.md). */
export const ACQUIRERS = ['sandbox', 'none'] as const;
export type AcquirerName = (typeof ACQUIRERS)[number];

/**
 * The pipeline's jobs, as PIPELINE_RETRY_HORIZONS names them. `callback` is no job since decision 264 (a
 * callback's row is its queue, retried on CALLBACK_*): still accepted, so a configuration naming it loads.
 */
export const PIPELINE_JOB_NAMES = [
  'normalise',
  'ledger',
  'callback',
  'recon-nightly',
  'recon-email',
  'receipt',
] as const;
export type PipelineJobName = (typeof PIPELINE_JOB_NAMES)[number];

export const NODE_ENVS = ['development', 'test', 'production'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
