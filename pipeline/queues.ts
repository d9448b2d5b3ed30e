import type { Config } from '../core/config.ts';
import { NORMALISE_QUEUE, TEST_SINK } from '../core/store/index.ts';
import { ledgerQueue } from './jobs/ledger.ts';

/** Every queue of the pipeline under this configuration: normalise, and one ledger queue per sink. */
export function pipelineQueueNames(config: Config): string[] {
  const sinks = new Set<string>();
  for (const route of Object.values(config.webhook.routes))
    sinks.add(route.kind === 'test' ? TEST_SINK : route.agency);
  return [NORMALISE_QUEUE, ...[...sinks].sort().map(ledgerQueue)];
}
