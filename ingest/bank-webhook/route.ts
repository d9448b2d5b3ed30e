import type { Next } from 'koa';
import type { Deps } from '../../core/deps.ts';
import { DomainError } from '../../core/errors.ts';
import { toDomainError } from '../../core/http/problem.ts';
import { readRawBody } from '../../core/http/raw-body.ts';
import type { AppContext, AppRouter, StateWith } from '../../core/http/state.ts';
import { createPartnerAuthenticator, requirePartner } from '../partner-auth.ts';
import { createBatchPreparer, type BatchPreparer } from './preparer.ts';
import { storeBankBatch } from './service.ts';

/** POST /api/bank/webhook on the {pay_url} host: auth -> read and validate the batch -> store it. */
export function mountBankWebhook(router: AppRouter, deps: Deps): void {
  const authenticate = createPartnerAuthenticator(deps.store, { failures: deps.limits.partnerAuthFailures });
  // Parsing, the schema and preparing 1,000 records take longer than storing them: large bodies go to
  // worker threads, so the event loop (which commits the batches) serves other requests meanwhile.
  const preparer = createBatchPreparer(
    { validate: deps.validators.bankWebhookRequest, webhook: deps.config.webhook },
    deps.config.webhook.threads,
  );
  router.post<StateWith<'partnerId' | 'batch'>>(
    '/api/bank/webhook',
    countBatch(deps),
    requirePartner(authenticate),
    readBatch(deps, preparer),
    async (ctx) => {
      ctx.body = await storeBankBatch(deps, {
        partnerId: ctx.state.partnerId,
        contentType: ctx.get('content-type'),
        ...ctx.state.batch,
      });
    },
  );
}

/** Counts each request by the status it gets: refusals (401, 413, 422, 503...) show in the metrics. */
function countBatch(deps: Deps) {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    try {
      await next();
      deps.metrics.webhookBatch(ctx.status);
    } catch (err) {
      deps.metrics.webhookBatch(toDomainError(err).status);
      throw err;
    }
  };
}

/** 415, 413, then the preparer's 400, 413 and 422 in that order; on success ctx.state.batch is set. */
function readBatch(deps: Deps, preparer: BatchPreparer) {
  const { maxBodyBytes } = deps.config.webhook;
  return async (ctx: AppContext, next: Next): Promise<void> => {
    if (ctx.request.type !== 'application/json') {
      throw new DomainError(
        'unsupported-media-type',
        'Send the batch as Content-Type: application/json.',
        [],
        {
          'Accept-Post': 'application/json',
        },
      );
    }
    const body = await readRawBody(ctx, maxBodyBytes);
    // Received once the body is in: the time window is judged against this instant, and it is archived.
    const receivedAt = deps.clock.now();
    const { thread, ...prepared } = await preparer.prepare(body, receivedAt);
    deps.metrics.webhookPrepared(thread);
    ctx.state.batch = { body, receivedAt, ...prepared };
    await next();
  };
}
