import { DomainError, type RecordFieldError } from '../../core/errors.ts';
import { parseJson } from '../../core/http/raw-body.ts';
import { MAX_PROBLEM_ERRORS } from '../../core/http/problem.ts';
import {
  MAX_OBJECT_KEYS,
  type BankWebhookRequest,
  type BatchFieldError,
  type BatchProblems,
  type BatchValidator,
} from '../../schemas/index.ts';

/**
 * Far beyond any valid batch (4 levels: batch, transactions, record, data; at most 13 keys in one object),
 * so it refuses only hostile bodies, before they cost a parse: 5 MB of nested brackets took 800 ms and
 * 145 MB of heap to parse, one object of 400,000 keys a quarter of a second (decision 215).
 */
export const BATCH_SHAPE = { maxDepth: 8, maxKeys: MAX_OBJECT_KEYS };

/** The batch of a webhook body, or a DomainError: 400 (not JSON), 413 (too many records), 422 (schema). */
export function readBatchBody(
  body: Buffer,
  validate: BatchValidator,
  maxRecords: number,
): BankWebhookRequest {
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
  return parsed;
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
