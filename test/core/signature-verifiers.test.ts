/**
 * The verifiers docs/signatures.md publishes for merchants in other languages: the page quotes each file
 * verbatim, and the Python and PHP ones run here (python3, php-cli) on the published vector and on the
 * service's own direct callbacks, received at a real merchant on 127.0.0.1.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInProcessRuntime } from '../../pipeline/in-process-runtime.ts';
import { REPO_ROOT, startApp } from '../helpers.ts';
import { LZS_KEY, postOrder, startMerchant } from '../support/merchant.ts';

const OTHER_KEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const VERIFIERS = [
  { file: 'verify.py', lang: 'python' },
  { file: 'verify.php', lang: 'php' },
  { file: 'Verify.java', lang: 'java' },
  { file: 'Verify.cs', lang: 'csharp' },
  { file: 'verify.go', lang: 'go' },
];
/** The verifiers this suite runs: Debian's python3 and php-cli (.ci/run installs what is missing). */
const RUNNABLE = [
  { name: 'Python', command: 'python3', script: 'verify.py' },
  { name: 'PHP', command: 'php', script: 'verify.php' },
];

const doc = () => readFileSync(path.join(REPO_ROOT, 'docs/signatures.md'), 'utf8');
const verifierPath = (file: string) => path.join(REPO_ROOT, 'docs/verifiers', file);

/** What a verifier says of a raw callback body: its exit status and its one line. */
function runVerifier(command: string, script: string, body: string, apiKey: string) {
  const run = spawnSync(command, [verifierPath(script), apiKey], { input: body, encoding: 'utf8' });
  assert.equal(run.error, undefined, `${command} could not run`);
  assert.equal(run.stderr, '', `${command} wrote to stderr`);
  return { status: run.status, out: run.stdout.trim() };
}

function assertVerdict(body: string, apiKey: string, valid: boolean, what: string): void {
  for (const { name, command, script } of RUNNABLE) {
    const verdict = runVerifier(command, script, body, apiKey);
    assert.deepEqual(
      verdict,
      valid ? { status: 0, out: 'valid' } : { status: 1, out: 'invalid' },
      `${name}: ${what}`,
    );
  }
}

test('docs/signatures.md quotes every published verifier exactly as the file the tests run', () => {
  const page = doc();
  for (const { file, lang } of VERIFIERS) {
    const source = readFileSync(verifierPath(file), 'utf8');
    assert.ok(
      page.includes(`\`\`\`${lang}\n${source}\`\`\`\n`),
      `${file} is quoted verbatim as a ${lang} block`,
    );
  }
});

test('the Python and PHP verifiers reproduce the published callback vector and refuse what is not it', () => {
  const json = /<!-- vectors: (.+) -->/.exec(doc())?.[1];
  assert.ok(json);
  const { apiKey, vectors } = JSON.parse(json) as {
    apiKey: string;
    vectors: { kind: string; params: Record<string, string>; signature: string }[];
  };
  const vector = vectors.find((v) => v.kind === 'callback');
  assert.ok(vector);
  assert.match(vector.params.extraData ?? '', /~/, 'the vector has the ~ that urlencode would keep');
  const body = new URLSearchParams({ ...vector.params, signature: vector.signature }).toString();
  assertVerdict(body, apiKey, true, 'the published vector');
  assertVerdict(
    body.replace(vector.signature, vector.signature.toUpperCase()),
    apiKey,
    true,
    'upper-case hex',
  );
  assertVerdict(body, OTHER_KEY, false, "another agency's key");
  const amount = `amount=${vector.params.amount ?? ''}`;
  assert.ok(body.includes(amount));
  assertVerdict(body.replace(amount, 'amount=100.50'), apiKey, false, 'a changed amount');
  assertVerdict(body.replace(`signature=${vector.signature}`, ''), apiKey, false, 'no signature');
  assertVerdict(`${body}&status=failed`, apiKey, false, 'a repeated field');
  // A forger's signature need not be hex: it is refused like any other, not a crash of the receiver.
  assertVerdict(
    body.replace(`signature=${vector.signature}`, `signature=%C3%A9${vector.signature.slice(2)}`),
    apiKey,
    false,
    'a non-ASCII signature',
  );
});

test("the Python and PHP verifiers accept the service's own direct callback, whose fpx JSON holds a ~ when extraData is set", async (t) => {
  const app = await startApp(t);
  const merchant = await startMerchant(t);
  const res = await postOrder(app, {
    agency: 'LZS',
    refNo: `INV 2026/11 a*b'c+d ${Math.random().toString(36).slice(2, 8)}`,
    amount: '10.00',
    email: 'ali@example.my',
    returnUrl: `${merchant.url}/return`,
    extraData: 'ABC123',
  });
  assert.equal(res.status, 201);
  const created = (await res.json()) as { orderNo: string; checkoutUrl: string };
  const token = new URL(created.checkoutUrl, app.url).searchParams.get('t') ?? '';
  const paid = await fetch(`${app.url}/v2/checkout/${created.orderNo}/pay`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: new URLSearchParams({ t: token, method: 'fpx', bank: 'SBX00' }).toString(),
    redirect: 'manual',
  });
  assert.equal(paid.status, 303);
  await (await fetch(new URL(paid.headers.get('location') ?? '', app.url))).text();
  await createInProcessRuntime(app.deps).drain();

  const direct = await merchant.find((r) => r.form.get('orderNo') === created.orderNo, 'the direct callback');
  assert.equal(direct.form.get('status'), 'success');
  assert.match(direct.form.get('fpx') ?? '', /~/, 'the signed fpx JSON holds a ~');
  assert.match(direct.body, /%7E/, 'the service sends ~ as %7E');
  assertVerdict(direct.body, LZS_KEY, true, "the service's own callback");
  assertVerdict(direct.body.replace(/amount=[^&]+/, 'amount=1.00'), LZS_KEY, false, 'a changed amount');
  assertVerdict(direct.body, OTHER_KEY, false, "another agency's key");
});
