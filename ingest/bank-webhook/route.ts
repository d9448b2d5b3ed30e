import type { Next } from 'koa';
import type { Deps } from '../../core/deps.ts';
import { DomainError, ERROR_CATALOGUE, type RecordFieldError } from '../../core/errors.ts';
import { parseJson, readRawBody } from '../../core/http/raw-body.ts';
import { MAX_PROBLEM_ERRORS } from '../../core/http/problem.ts';
import type { AppContext, AppRouter, StateWith } from '../../core/http/state.ts';
import { MAX_OBJECT_KEYS, type BatchFieldError, type BatchProblems } from '../../schemas/index.ts';
import { createPartnerAuthenticator, requirePartner } from '../partner-auth.ts';
import { ingestBankBatch } from './service.ts';

/** POST /api/bank/webhook on the {pay_url} host: auth -> read and validate the batch -> store it. */
export function mountBankWebhook(router: AppRouter, deps: Deps): void {
  const authenticate = createPartnerAuthenticator(deps.store, { failures: deps.limits.partnerAuthFailures });
  router.post<StateWith<'partnerId' | 'batch'>>(
    '/api/bank/webhook',
    countBatch(deps),
    requirePartner(authenticate),
    readBatch(deps),
    async (ctx) => {
      const { body, request } = ctx.state.batch;
      ctx.body = await ingestBankBatch(deps, {
        partnerId: ctx.state.partnerId,
        contentType: ctx.get('content-type'),
        body,
        request,
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
      deps.metrics.webhookBatch(err instanceof DomainError ? ERROR_CATALOGUE[err.code].status : 500);
      throw err;
    }
  };
}

/**
 * Far beyond any valid batch (4 levels: batch, transactions, record, data; at most 13 keys in one object),
 * so it refuses only hostile bodies, before they cost a parse.
 */
const BATCH_SHAPE = { maxDepth: 8, maxKeys: MAX_OBJECT_KEYS };

/** 415, 413, 400 and 422 in that order; on success ctx.state.batch holds the raw bytes and the batch. */
function readBatch(deps: Deps) {
  const { maxBodyBytes, maxRecords } = deps.config.webhook;
  const validate = deps.validators.bankWebhookRequest;
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
    const parsed = parseJson(body, BATCH_SHAPE);
    const transactions = (parsed as { transactions?: unknown } | null)?.transactions;
    if (Array.isArray(transactions) && transactions.length > maxRecords) {
      throw new DomainError(
        'too-many-records',
        `A batch may hold at most ${maxRecords} records; this one has ${transactions.length}. Split it.`,
      );
    }
    if (!validate(parsed)) {
      // One more than the problem lists, so the problem says it was cut (errors_truncated).
      const problems = validate.explain(parsed, MAX_PROBLEM_ERRORS + 1);
      const errors = problems.errors.map((e) => withOrderno(e, transactions));
      throw new DomainError('validation-failed', describeInvalid(problems), errors);
    }
    ctx.state.batch = { body, request: parsed };
    await next();
  };
}

/** Adds the orderno of the record an error is about, when it has one. */
function withOrderno(error: BatchFieldError, transactions: unknown): RecordFieldError {
  if (error.index === undefined || !Array.isArray(transactions)) return error;
  const orderno = (transactions[error.index] as { orderno?: unknown } | null)?.orderno;
  const { index, ...rest } = error;
  return { index, ...(typeof orderno === 'string' && { orderno }), ...rest };
}

function describeInvalid(problems: BatchProblems): string {
  const records = problems.invalidRecords;
  const what = records > 0 ? `${records} record(s) break the schema` : 'The batch breaks the schema';
  const listed = problems.truncated
    ? `errors[] lists the first ${MAX_PROBLEM_ERRORS} problems, each with its JSON pointer`
    : 'See errors[] for each problem and its JSON pointer';
  return `${what}; nothing of the batch was stored. ${listed}.`;
}
