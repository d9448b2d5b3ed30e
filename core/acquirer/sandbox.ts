import { randomInt } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import { PENDING_CODES } from '../payments/status.ts';
import type { Store } from '../store/index.ts';
import { formatKl } from '../time.ts';
import type { Acquirer, AcquirerBank } from './types.ts';

/** Outcomes a tester picks on the sandbox page (spec 2.4 codes). */
export const SANDBOX_OUTCOMES: readonly { code: string; label: string }[] = [
  { code: '00', label: 'Approve (00)' },
  { code: '09', label: 'Leave pending (09)' },
  { code: '99', label: 'Leave pending (99)' },
  { code: '76', label: 'Leave pending (76)' },
  { code: '51', label: 'Decline: insufficient funds (51)' },
  { code: 'BC', label: 'Payer cancels (BC)' },
];

/**
 * FPX test banks. `SBX<code>` banks decide at once with that code, with no sandbox page: the rule that
 * makes every outcome reachable without a browser (tests, demos, curl). The others show the sandbox page.
 */
export const SANDBOX_BANKS: readonly AcquirerBank[] = [
  { id: 'TEST0021', name: 'SBI Bank A', label: 'SBI Bank A (sandbox: pick the outcome)' },
  { id: 'TEST0022', name: 'SBI Bank B', label: 'SBI Bank B (sandbox: pick the outcome)' },
  { id: 'SBX00', name: 'Sandbox: always approves (00)' },
  { id: 'SBX09', name: 'Sandbox: always pending (09)' },
  { id: 'SBX51', name: 'Sandbox: always declines (51)' },
  { id: 'SBXBC', name: 'Sandbox: payer cancels (BC)' },
];

/** The sandbox page of an attempt (served by ingest/checkout/sandbox-routes.ts). */
export const sandboxPagePath = (ref: string) => `/sandbox/${encodeURIComponent(ref)}`;

/** The sandbox acquirer: keeps its own records in SQLite, like a bank would keep its own. */
export function createSandboxAcquirer(
  store: Store,
  clock: Clock,
): Acquirer & {
  /** A tester's pick on the sandbox page: allowed while undecided or pending. */
  decide(ref: string, code: string): Promise<boolean>;
} {
  return {
    name: 'sandbox',
    sandbox: true,
    methods: ['fpx', 'card', 'ewallet'],
    banks: () => SANDBOX_BANKS,

    async initiate(input) {
      const ref = newId('sbx');
      const fixed = /^SBX([0-9A-Z]{2})$/.exec(input.bankId ?? '')?.[1];
      const at = input.at.toISOString();
      await store.sandbox.create({
        ref,
        orderNo: input.orderNo,
        method: input.method,
        bankId: input.bankId,
        amountSen: input.amountSen,
        outcome: fixed ?? null,
        txnId: `SBX${Date.now()}${String(randomInt(1000, 9999))}`,
        createdAt: at,
        decidedAt: fixed !== undefined ? at : null,
        returnPath: input.returnPath,
      });
      return { ref, redirectPath: fixed !== undefined ? input.returnPath : sandboxPagePath(ref) };
    },

    async enquire(ref) {
      const row = await store.sandbox.get(ref);
      if (!row) return { code: '', txnId: null, txnTime: null };
      return {
        code: row.outcome ?? '',
        txnId: row.txnId,
        txnTime: row.decidedAt ? formatKl(new Date(row.decidedAt)) : null,
      };
    },

    async decide(ref, code) {
      if (!SANDBOX_OUTCOMES.some((o) => o.code === code)) return false;
      return store.sandbox.decide(ref, code, PENDING_CODES, clock.now().toISOString());
    },
  };
}
