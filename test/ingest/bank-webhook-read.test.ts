import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { configuredValidators } from '../../core/validators.ts';
import { DomainError } from '../../core/errors.ts';
import { findJsonShapeProblem } from '../../core/http/json-shape.ts';
import { BATCH_SHAPE, readBatchBody } from '../../ingest/bank-webhook/read.ts';
import { bankRecord } from '../helpers.ts';

const validate = configuredValidators(['BANKLZS', 'BANKPPZ', 'BANK']).bankWebhookRequest;
const MAX_RECORDS = 5;

function refusal(body: string | Buffer): { code: string; pointers: string[] } {
  try {
    readBatchBody(Buffer.isBuffer(body) ? body : Buffer.from(body), validate, MAX_RECORDS);
  } catch (err) {
    assert.ok(err instanceof DomainError, String(err));
    return { code: err.code, pointers: err.fieldErrors.map((e) => e.pointer) };
  }
  assert.fail('the body was accepted');
}

const tooDeep = `${'['.repeat(20)}${']'.repeat(20)}`;

test('reading a webhook body', async (t) => {
  // The shape limits refuse hostile bodies before they are parsed; they must never refuse a batch the schema
  // accepts. The schema files say so: every object closed, with few enough properties, nested four levels
  // (batch, transactions, record, data).
  await t.test('the schema accepts nothing beyond the shape limits', () => {
    const schema = (name: string) =>
      JSON.parse(readFileSync(new URL(`../../schemas/${name}`, import.meta.url), 'utf8')) as {
        additionalProperties: boolean;
        properties: Record<string, { type?: string; $ref?: string; items?: unknown }>;
      };
    const objects = ['bank-webhook-request.json', 'bank-transaction.json', 'bank-zakat-data.json'];
    for (const name of objects) {
      const s = schema(name);
      assert.equal(s.additionalProperties, false, `${name} is closed`);
      assert.ok(Object.keys(s.properties).length <= BATCH_SHAPE.maxKeys, `${name} has few properties`);
    }
    // Only these nest: transactions (an array of records) and a record's data; every other value is a scalar.
    const nesting = (name: string) =>
      Object.entries(schema(name).properties).filter(
        ([, p]) => p.$ref || p.items || p.type === 'object' || p.type === 'array',
      );
    assert.deepEqual(
      nesting('bank-webhook-request.json').map(([k]) => k),
      ['transactions'],
    );
    assert.deepEqual(
      nesting('bank-transaction.json').map(([k]) => k),
      ['data'],
    );
    assert.deepEqual(nesting('bank-zakat-data.json'), []);
    assert.ok(4 <= BATCH_SHAPE.maxDepth);
    const full = { $schema: 'x', transactions: [bankRecord()] };
    assert.equal(findJsonShapeProblem(JSON.stringify(full), BATCH_SHAPE), undefined);
    assert.deepEqual(readBatchBody(Buffer.from(JSON.stringify(full)), validate, MAX_RECORDS), full);
  });

  await t.test('a body beyond the shape is refused for its shape first, whatever else is wrong', () => {
    const record = JSON.stringify(bankRecord()).slice(0, -1);
    // Malformed JSON and too deep: the shape's 422, not the 400.
    assert.deepEqual(refusal(`{"transactions":[${record},"deep":${tooDeep}}`), {
      code: 'validation-failed',
      pointers: ['/transactions/0/deep/0/0/0/0/0'],
    });
    // Too many records and too deep: the shape's 422, not the 413.
    const many = Array.from({ length: MAX_RECORDS + 1 }, () => JSON.stringify(bankRecord()));
    many.push(`${record},"deep":${tooDeep}}`);
    assert.equal(refusal(`{"transactions":[${many.join(',')}]}`).code, 'validation-failed');
  });

  await t.test('a body beyond the shape is refused from its text, never parsed', () => {
    // 5 MB of nested brackets: JSON.parse took 800 ms and 145 MB of heap for it; the scan stops at depth 9.
    const deep = `{"transactions":[${'['.repeat(2_600_000)}${']'.repeat(2_600_000)}]}`;
    const wide = JSON.stringify({
      transactions: [Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]))],
    });
    const parse = JSON.parse;
    const parsed: number[] = [];
    JSON.parse = ((text: string, reviver?: never): unknown => {
      parsed.push(text.length);
      return parse(text, reviver) as unknown;
    }) as typeof JSON.parse;
    try {
      for (const body of [deep, wide]) {
        const started = performance.now();
        assert.equal(refusal(body).code, 'validation-failed');
        t.diagnostic(`refused ${body.length} bytes in ${(performance.now() - started).toFixed(1)} ms`);
      }
    } finally {
      JSON.parse = parse;
    }
    assert.ok(!parsed.some((length) => length > 1000), `a hostile body was parsed: ${parsed.join(', ')}`);
  });

  await t.test('within the shape, the refusals are 400, 413 and 422 as before', () => {
    assert.equal(refusal('{"transactions":[').code, 'malformed-json');
    assert.equal(refusal(Buffer.from([0x7b, 0xff, 0x7d])).code, 'malformed-json');
    const many = { transactions: Array.from({ length: MAX_RECORDS + 1 }, () => bankRecord()) };
    assert.equal(refusal(JSON.stringify(many)).code, 'too-many-records');
    const wrong = refusal(JSON.stringify({ transactions: [bankRecord({ status: 'done' as never })] }));
    assert.deepEqual(wrong, { code: 'validation-failed', pointers: ['/transactions/0/status'] });
  });
});
