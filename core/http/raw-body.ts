import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { DomainError } from '../errors.ts';
import { findJsonShapeProblem, type JsonShapeLimits } from './json-shape.ts';
import { MAX_PROBLEM_ERRORS } from './problem.ts';
import { illFormedStrings, mayHoldLoneSurrogates } from './well-formed.ts';

/**
 * Reads the request body as raw bytes (kept verbatim for the archive and its SHA-256), refusing more
 * than `limit` bytes with 413 before buffering it all.
 */
export async function readRawBody(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > limit) {
    throw new DomainError('payload-too-large', `The body may be at most ${limit} bytes.`);
  }
  try {
    return await getRawBody(ctx.req, { limit, length: Number.isFinite(declared) ? declared : undefined });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new DomainError('payload-too-large', `The body may be at most ${limit} bytes.`);
    }
    if (type === 'request.size.invalid' || type === 'request.aborted') {
      throw new DomainError('bad-request', 'The body ended before its declared length.');
    }
    throw err;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a JSON body, refusing invalid UTF-8 or malformed JSON with 400, and text that is not well-formed
 * Unicode (a lone surrogate's escape) with 422, each such string pointed at. With `shape`, a body nested
 * deeper or with a larger object than it allows is refused with 422 before it is parsed (so a body that
 * is both malformed and oversized gets the 422).
 */
export function parseJson(body: Buffer, shape?: JsonShapeLimits): unknown {
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new DomainError('malformed-json', 'The body is not valid UTF-8.');
  }
  const problem = shape && findJsonShapeProblem(text, shape);
  if (problem) {
    throw new DomainError(
      'validation-failed',
      'The body is larger in shape than the schema could accept; nothing was stored. See errors[].',
      [problem],
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch (err) {
    throw new DomainError('malformed-json', `The body is not valid JSON: ${(err as Error).message}`);
  }
  // Text no UTF-8 can hold, written as an escape: refused as invalid UTF-8 is, but pointing at it.
  if (mayHoldLoneSurrogates(text)) {
    // One more than the problem lists, so the problem says it was cut (errors_truncated).
    const errors = illFormedStrings(parsed, MAX_PROBLEM_ERRORS + 1);
    if (errors.length > 0)
      throw new DomainError(
        'validation-failed',
        'The body holds text that is not well-formed Unicode; nothing was stored. See errors[].',
        errors,
      );
  }
  return parsed;
}
