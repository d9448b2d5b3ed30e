import type { Clock } from '../clock.ts';
import type { AcquirerName } from '../config.ts';
import { DomainError } from '../errors.ts';
import type { Store } from '../store/index.ts';
import { createSandboxAcquirer } from './sandbox.ts';
import type { Acquirer } from './types.ts';

/**
 * The acquirer a deployment sends payments to (ACQUIRER), or null when payments are not configured: then
 * checkout, the pay pages and pay-link QR codes say so, and everything else (the webhook, the pipeline,
 * reports and workbooks) runs as usual. A real acquirer is added here (docs/acquirers.md).
 */
export function createAcquirer(name: AcquirerName, store: Store, clock: Clock): Acquirer | null {
  switch (name) {
    case 'sandbox':
      return createSandboxAcquirer(store, clock);
    case 'none':
      return null;
  }
}

/**
 * The acquirer, or the refusal every payment entry point gives when there is none: checkout, the pay
 * pages, the unsigned QR of a pay link and the signed QR generator (a QR code that leads nowhere is worse
 * than none). 503, so a merchant's integration retries later rather than treating it as its own fault.
 */
export function requireAcquirer(acquirer: Acquirer | null): Acquirer {
  if (acquirer) return acquirer;
  throw new DomainError(
    'payments-not-configured',
    'Payments are not configured on this service yet: no payment can be made here for now.',
  );
}
