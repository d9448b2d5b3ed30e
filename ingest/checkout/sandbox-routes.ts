import type { AppRouter } from '../../core/http/state.ts';
import { SANDBOX_BANKS, SANDBOX_OUTCOMES } from '../../core/acquirer/sandbox.ts';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import { readRawBody } from '../../core/http/raw-body.ts';
import { PENDING_CODES } from '../../core/payments/status.ts';
import { sendPage } from './html.ts';
import { sandboxBankPage } from './sandbox-page.ts';
import { payerLang } from './lang.ts';

/**
 * The sandbox acquirer's own pages (it stands in for a bank's): a tester picks the outcome of a payment,
 * or later resolves one left pending. The form posts `outcome`, so curl can do the same:
 *   curl -d outcome=00 {base_url}/sandbox/<ref>
 */
export function mountSandbox(router: AppRouter, deps: Deps): void {
  // Only where the sandbox is the acquirer: production has no sandbox page or route at all.
  if (deps.acquirer?.sandbox !== true) return;
  router.get('/sandbox/:ref', async (ctx) => {
    const payment = await deps.store.sandbox.get(ctx.params.ref ?? '');
    if (!payment) throw new DomainError('not-found', 'There is no such sandbox payment.');
    // Undecided: every outcome; pending: only the final ones; decided: none (the page just says so).
    const outcomes =
      payment.outcome === null
        ? SANDBOX_OUTCOMES
        : PENDING_CODES.includes(payment.outcome)
          ? SANDBOX_OUTCOMES.filter((o) => !PENDING_CODES.includes(o.code))
          : [];
    const bank = SANDBOX_BANKS.find((b) => b.id === payment.bankId);
    sendPage(ctx, 200, { ...sandboxBankPage(payerLang(ctx), payment, bank, outcomes), sandbox: true });
  });

  router.post('/sandbox/:ref', async (ctx) => {
    const payment = await deps.store.sandbox.get(ctx.params.ref ?? '');
    if (!payment) throw new DomainError('not-found', 'There is no such sandbox payment.');
    const body = await readRawBody(ctx, 4096);
    const outcome = new URLSearchParams(body.toString('utf8')).get('outcome') ?? '';
    if (!SANDBOX_OUTCOMES.some((o) => o.code === outcome)) {
      throw new DomainError('validation-failed', 'Pick an outcome.', [
        { pointer: '/outcome', message: `must be one of ${SANDBOX_OUTCOMES.map((o) => o.code).join(', ')}` },
      ]);
    }
    const decided = await deps.store.sandbox.decide(
      payment.ref,
      outcome,
      PENDING_CODES,
      deps.clock.now().toISOString(),
    );
    if (!decided) throw new DomainError('order-already-paid', 'This sandbox payment is already decided.');
    // Back to the gateway, which asks the acquirer (this sandbox) for the result.
    ctx.redirect(payment.returnPath);
    ctx.status = 303;
  });
}
