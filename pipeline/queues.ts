import type { Config } from '../core/config.ts';
import {
  CALLBACK_QUEUE,
  NORMALISE_QUEUE,
  RECEIPT_QUEUE,
  RECON_EMAIL_QUEUE,
  RECON_NIGHTLY_QUEUE,
  ledgerQueue,
} from '../core/queues.ts';
import { TEST_SINK } from '../core/store/index.ts';

/** Every queue of the pipeline under this configuration: normalise, one ledger queue per sink, callbacks, reconciliation, receipts. */
export function pipelineQueueNames(config: Config): string[] {
  const sinks = new Set<string>();
  for (const route of Object.values(config.webhook.routes))
    sinks.add(route.kind === 'test' ? TEST_SINK : route.agency);
  return [
    NORMALISE_QUEUE,
    ...[...sinks].sort().map(ledgerQueue),
    CALLBACK_QUEUE,
    RECON_NIGHTLY_QUEUE,
    RECON_EMAIL_QUEUE,
    RECEIPT_QUEUE,
  ];
}
