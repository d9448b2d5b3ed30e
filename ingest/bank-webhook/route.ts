import type Router from '@koa/router';
import type { Context, Next } from 'koa';
import type { Deps } from '../../core/deps.ts';
import { DomainError, ERROR_CATALOGUE, type RecordFieldError } from '../../core/errors.ts';
import { parseJson, readRawBody } from '../../core/http/raw-body.ts';
import type { BankWebhookRequest } from '../../schemas/index.ts';
import { createPartnerAuthenticator, requirePartner } from '../partner-auth.ts';
import { ingestBankBatch } from './service.ts';

/** POST /api/bank/webhook on the {pay_url} host: auth -> read and validate the batch -> store it. */
export function mountBankWebhook(router: Router, deps: Deps): void {
  const authenticate = createPartnerAuthenticator(deps.store, { failures: deps.limits.partnerAuthFailures });
  router.post(
    '/api/bank/webhook',
    countBatch(deps),
    requirePartner(authenticate),
    readBatch(deps),
    async (ctx) => {
      const { body, request } = ctx.state.batch as { body: Buffer; request: BankWebhookRequest };
      ctx.body = await ingestBankBatch(deps, {
        partnerId: ctx.state.partnerId as string,
        contentType: ctx.get('content-type'),
        body,
        request,
      });
    },
  );
}

/** Counts each request by the status it gets: refusals (401, 413, 422, 503...) show in the metrics. */
function countBatch(deps: Deps) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      deps.metrics.webhookBatch(ctx.status);
    } catch (err) {
      deps.metrics.webhookBatch(err instanceof DomainError ? ERROR_CATALOGUE[err.code].status : 500);
      throw err;
    }
  };
}

/** 415, 413, 400 and 422 in that order; on success ctx.state.batch holds the raw bytes and the batch. */
function readBatch(deps: Deps) {
  const { maxBodyBytes, maxRecords } = deps.config.webhook;
  const validate = deps.validators.bankWebhookRequest;
  return async (ctx: Context, next: Next): Promise<void> => {
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
    const parsed = parseJson(body);
    const transactions = (parsed as { transactions?: unknown } | null)?.transactions;
    if (Array.isArray(transactions) && transactions.length > maxRecords) {
      throw new DomainError(
        'too-many-records',
        `A batch may hold at most ${maxRecords} records; this one has ${transactions.length}. Split it.`,
      );
    }
    if (!validate(parsed)) {
      const errors = validate.errors().map((e) => locateRecord(e, transactions));
      throw new DomainError('validation-failed', describeInvalid(errors), errors);
    }
    ctx.state.batch = { body, request: parsed };
    await next();
  };
}

/** Adds the record index and orderno to an error under /transactions/N. */
function locateRecord(error: { pointer: string; message: string }, transactions: unknown): RecordFieldError {
  const match = /^\/transactions\/(\d+)(?:\/|$)/.exec(error.pointer);
  if (!match || !Array.isArray(transactions)) return error;
  const index = Number(match[1]);
  const orderno = (transactions[index] as { orderno?: unknown } | null)?.orderno;
  return { index, ...(typeof orderno === 'string' && { orderno }), ...error };
}

function describeInvalid(errors: readonly RecordFieldError[]): string {
  const records = new Set(errors.flatMap((e) => (e.index === undefined ? [] : [e.index]))).size;
  const what = records > 0 ? `${records} record(s) break the schema` : 'The batch breaks the schema';
  return `${what}; nothing of the batch was stored. See errors[] for each problem and its JSON pointer.`;
}
