import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import Koa from 'koa';
import Router from '@koa/router';
import { createLogger } from '../../core/logger.ts';
import { isEmailAddress } from '../../core/email.ts';
import { problemMiddleware } from '../../core/http/problem.ts';
import { listen } from '../../core/http/serve.ts';
import type { AppState, InputState } from '../../core/http/state.ts';
import { validate, type ValidateOptions } from '../../core/http/validate.ts';
import { isCalendarDay } from '../../core/time.ts';
import { compileValidators, type ZakatReportQuery } from '../../schemas/index.ts';
import { onCleanup, problemOf } from '../helpers.ts';

const validators = compileValidators({
  bankAgencyCodes: ['BANK'],
  formats: { email: isEmailAddress, date: isCalendarDay },
});

/** A real Koa app on 127.0.0.1 whose one route echoes the typed input validate() gave it. */
async function echoInput(t: TestContext, options: ValidateOptions = {}): Promise<string> {
  const app = new Koa();
  const router = new Router<AppState>();
  router.get<InputState<ZakatReportQuery>>('/zakat', validate(validators, 'zakatReport', options), (ctx) => {
    const { items, page, start, end } = ctx.state.input;
    // Arithmetic on the typed values: items and page arrive as numbers, not text.
    ctx.body = { start, end, items, page, next: page + 1, isNumber: typeof items === 'number' };
  });
  app.use(problemMiddleware(createLogger('silent')));
  app.use(router.routes());
  const listening = await listen([{ name: 'validate', app, host: '127.0.0.1', port: 0 }]);
  onCleanup(t, () => listening.close(0));
  return listening.servers[0]?.url ?? '';
}

test('validate() puts the typed query on the state, with the defaults of its schema file', async (t) => {
  const url = await echoInput(t, {
    defaults: (q) => ({ start: '2026-11-20', end: q.start ?? '2026-11-20' }),
  });
  const body: unknown = await (await fetch(`${url}/zakat?items=25&page=2`)).json();
  assert.deepEqual(body, {
    start: '2026-11-20',
    end: '2026-11-20',
    items: 25,
    page: 2,
    next: 3,
    isNumber: true,
  });
  const defaults: unknown = await (await fetch(`${url}/zakat?start=2026-11-21`)).json();
  assert.deepEqual(defaults, {
    start: '2026-11-21',
    end: '2026-11-21',
    items: 100,
    page: 0,
    next: 1,
    isNumber: true,
  });
});

test('validate() refuses a bad query as problem+json listing each problem by its JSON pointer', async (t) => {
  const url = await echoInput(t, {
    defaults: (q) => ({ start: '2026-11-20', end: q.start ?? '2026-11-20' }),
  });
  const response = await fetch(`${url}/zakat?start=2026-02-30&items=0&page=x`);
  assert.equal(response.status, 400);
  assert.equal(response.headers.get('content-type'), 'application/problem+json');
  const problem = await problemOf(response);
  assert.equal(problem.type, 'https://docs.amil.my/problems/bad-request');
  assert.equal(problem.detail, 'The query is not valid.');
  assert.deepEqual(problem.errors, [
    { pointer: '/start', message: 'must be a date that exists, YYYY-MM-DD' },
    // The default end is the start sent, so it is as wrong as the start.
    { pointer: '/end', message: 'must be a date that exists, YYYY-MM-DD' },
    { pointer: '/items', message: 'must be 1 to 10000, or -1 for every row' },
    { pointer: '/page', message: 'must be a whole number from 0' },
  ]);
});

test('validate() reads integers only as decimal digits: 5.0, 1e2, 0x10 and " 5" are refused', async (t) => {
  const url = await echoInput(t);
  for (const items of ['5.0', '1e2', '0x10', '%205', '+5', '-0']) {
    const response = await fetch(`${url}/zakat?start=2026-11-20&end=2026-11-20&items=${items}`);
    assert.equal(response.status, 400, items);
    assert.deepEqual(
      (await problemOf(response)).errors?.map((e) => e.pointer),
      ['/items'],
      items,
    );
  }
  const all = await fetch(`${url}/zakat?start=2026-11-20&end=2026-11-20&items=-1`);
  assert.equal(((await all.json()) as { items: number }).items, -1);
});

test('validate() refuses a key of the schema sent twice, and leaves keys it does not name alone', async (t) => {
  const url = await echoInput(t);
  const twice = await fetch(`${url}/zakat?start=2026-11-20&end=2026-11-20&items=5&items=6`);
  assert.equal(twice.status, 400);
  assert.equal((await problemOf(twice)).type, 'https://docs.amil.my/problems/repeated-parameter');
  const other = await fetch(`${url}/zakat?start=2026-11-20&end=2026-11-20&exp=1&exp=2&signature=x`);
  assert.equal(other.status, 200);
});
