import type Router from '@koa/router';
import { orderReturnPath, SANDBOX_OUTCOMES } from '../../core/acquirer/sandbox.ts';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import { readRawBody } from '../../core/http/raw-body.ts';
import { formatSen } from '../../core/money.ts';
import { PENDING_CODES } from '../../core/payments/status.ts';
import { html, sendPage } from './html.ts';

/**
 * The sandbox acquirer's own pages (it stands in for a bank's): a tester picks the outcome of a payment,
 * or later resolves one left pending. The form posts `outcome`, so curl can do the same:
 *   curl -d outcome=00 {base_url}/sandbox/<ref>
 */
export function mountSandbox(router: Router, deps: Deps): void {
  router.get('/sandbox/:ref', async (ctx) => {
    const payment = await deps.store.sandbox.get(ctx.params.ref ?? '');
    if (!payment) throw new DomainError('not-found', 'There is no such sandbox payment.');
    const open = payment.outcome === null || PENDING_CODES.includes(payment.outcome);
    const outcomes =
      payment.outcome === null
        ? SANDBOX_OUTCOMES
        : SANDBOX_OUTCOMES.filter((o) => !PENDING_CODES.includes(o.code));
    sendPage(ctx, 200, {
      title: 'Sandbox bank',
      body: html`<h1>Sandbox bank</h1>
        <p class="notice">
          This is the sandbox acquirer, standing in for
          ${payment.method === 'fpx' ? `FPX bank ${payment.bankId ?? ''}` : payment.method}. No real money
          moves.
        </p>
        <dl class="summary">
          <dt>Order</dt>
          <dd>${payment.orderNo}</dd>
          <dt>Amount</dt>
          <dd>RM ${formatSen(payment.amountSen)}</dd>
          <dt>Status</dt>
          <dd>${payment.outcome === null ? 'awaiting your choice' : `pending (${payment.outcome})`}</dd>
        </dl>
        ${
          open
            ? html`<form method="post" action="/sandbox/${encodeURIComponent(payment.ref)}">
                <fieldset>
                  <legend>
                    ${payment.outcome === null ? 'Outcome of this payment' : 'Resolve the pending payment'}
                  </legend>
                  ${outcomes.map(
                    (o, i) =>
                      html`<label class="option"
                        ><input
                          type="radio"
                          name="outcome"
                          value="${o.code}"
                          ${i === 0 ? html` checked` : ''}
                        />
                        ${o.label}</label
                      >`,
                  )}
                </fieldset>
                <button type="submit">Confirm</button>
              </form>`
            : html`<p>This payment is decided (${payment.outcome ?? ''}).</p>`
        }`,
    });
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
    ctx.redirect(orderReturnPath(payment.orderNo));
    ctx.status = 303;
  });
}
