import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { DEMO_ADMIN_PASSWORD } from '../core/config.ts';
import { REPO_ROOT, startApp } from './helpers.ts';
import { declaredMetrics, scrape } from './support/metrics.ts';

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const rules = (
  parse(read('docs/prometheus-alerts.yml')) as { groups: { name: string; rules: Rule[] }[] }
).groups.flatMap((g) => g.rules);
const RUNBOOK_BASE = 'https://docs.amil.my/operations#';

/** PromQL words the expressions may use besides metric names. */
const PROMQL = new Set([
  'sum',
  'min',
  'max',
  'count',
  'avg',
  'by',
  'without',
  'on',
  'ignoring',
  'and',
  'or',
  'unless',
  'time',
  'rate',
  'increase',
  'delta',
  'histogram_quantile',
  'abs',
  'offset',
]);

/** The identifiers of an expression outside label matchers, grouping clauses, ranges and strings. */
function identifiers(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '$1')
    .replace(/\[[^\]]*\]/g, '');
  return [...bare.matchAll(/[a-zA-Z_:][\w:]*/g)].map((m) => m[0]);
}

/** GitHub's anchor of a Markdown heading. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-');

test('every alert rule queries only metrics the service exports', async (t) => {
  const app = await startApp(t);
  const authorization = `Basic ${Buffer.from(`admin:${DEMO_ADMIN_PASSWORD}`).toString('base64')}`;
  const declared = declaredMetrics(await scrape(app.url, { authorization }));
  const exported = new Set<string>();
  for (const [name, type] of declared) {
    exported.add(name);
    if (type === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) exported.add(name + suffix);
  }
  assert.ok(rules.length >= 8, 'the rules file has its alerts');
  for (const rule of rules) {
    const names = identifiers(rule.expr).filter((id) => !PROMQL.has(id));
    assert.ok(
      names.some((n) => n.startsWith('amil_')),
      `${rule.alert} queries an amil metric: ${rule.expr}`,
    );
    for (const name of names) assert.ok(exported.has(name), `${rule.alert}: ${name} is not exported`);
  }
});

test('every alert has a for, a severity, a summary and a runbook heading in docs/operations.md', () => {
  const operations = read('docs/operations.md');
  const headings = new Set([...operations.matchAll(/^#{2,4} (.+)$/gm)].map((m) => slug(m[1] ?? '')));
  const alerts = rules.map((r) => r.alert);
  assert.equal(new Set(alerts).size, alerts.length, 'alert names are unique');
  for (const rule of rules) {
    assert.match(rule.alert, /^Amil[A-Z]\w+$/);
    assert.match(rule.for ?? '', /^\d+[smh]$/, `${rule.alert} has a for`);
    assert.ok(['critical', 'warning'].includes(rule.labels?.severity ?? ''), `${rule.alert} has a severity`);
    assert.ok(rule.annotations?.summary && rule.annotations.description, `${rule.alert} says what it means`);
    const runbook = rule.annotations.runbook_url ?? '';
    assert.equal(runbook, `${RUNBOOK_BASE}${slug(rule.alert)}`, `${rule.alert} links its runbook`);
    assert.ok(headings.has(slug(rule.alert)), `docs/operations.md has a heading ${rule.alert}`);
  }
  // And the runbook documents no alert that does not exist.
  const documented = [...operations.matchAll(/^### (Amil\w+)$/gm)].map((m) => m[1]);
  assert.deepEqual(documented.sort(), [...alerts].sort());
});
