import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import {
  createCallbackClient,
  isForbiddenAddress,
  parseAllowedAddresses,
  type CallbackClient,
  type CallbackClientOptions,
  type LookupAll,
} from '../../core/outbound/callback-client.ts';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  requests: Seen[];
  /** TCP connections accepted so far. */
  connections(): number;
}

/** A real HTTP receiver on 127.0.0.1 that records every request (body read in full) before `answer`. */
async function startReceiver(
  t: TestContext,
  answer: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void,
): Promise<Receiver> {
  const requests: Seen[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      answer(req, res, seen);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, requests, connections: () => connections };
}

function client(t: TestContext, options: Partial<CallbackClientOptions> = {}): CallbackClient {
  const created = createCallbackClient({ timeoutMs: 2000, allowedAddresses: ['127.0.0.1'], ...options });
  t.after(() => created.close());
  return created;
}

/** A fake resolver: `name` answers with the next entry of `answers` (the last one repeats). */
function fakeLookup(name: string, answers: string[][], calls: string[] = []): LookupAll {
  return (hostname, options, callback) => {
    calls.push(hostname);
    assert.equal(options.all, true, 'the guard always asks for every address');
    if (hostname !== name) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      return;
    }
    const next = answers[Math.min(calls.length - 1, answers.length - 1)] ?? [];
    const addresses: LookupAddress[] = next.map((address) => ({ address, family: net.isIP(address) }));
    setImmediate(() => callback(null, addresses));
  };
}

test('posts the form to an allowed 127.0.0.1 receiver and returns status and answer prefix', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('OK diterima ✓');
  });
  const body = 'orderno=A%201&amount=10.00&status=paid';
  const result = await client(t).postForm(`${receiver.url}/callback?x=1`, body);

  assert.equal(result.error, undefined);
  assert.equal(result.statusCode, 200);
  assert.equal(result.responsePrefix, 'OK diterima ✓');
  assert.equal(result.forbidden, undefined);
  assert.ok(result.latencyMs >= 0 && result.latencyMs < 2000);
  assert.equal(receiver.requests.length, 1);
  const [seen] = receiver.requests;
  assert.equal(seen?.method, 'POST');
  assert.equal(seen?.path, '/callback?x=1');
  assert.equal(seen?.body, body);
  assert.equal(seen?.headers['content-type'], 'application/x-www-form-urlencoded');
  assert.equal(seen?.headers['user-agent'], 'amil-callbacks/1');
  assert.equal(seen?.headers.cookie, undefined);
});

test('a custom user agent is sent', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => res.end());
  await client(t, { userAgent: 'amil-test/9' }).postForm(receiver.url, 'a=1');
  assert.equal(receiver.requests[0]?.headers['user-agent'], 'amil-test/9');
});

test('a 1 MB answer yields only its first 256 bytes', async (t) => {
  const answer = 'é' + 'x'.repeat(1024 * 1024);
  const receiver = await startReceiver(t, (_req, res) => res.end(answer));
  const result = await client(t).postForm(receiver.url, 'a=1');
  assert.equal(result.statusCode, 200);
  assert.equal(result.error, undefined);
  assert.equal(Buffer.byteLength(result.responsePrefix), 256);
  assert.equal(result.responsePrefix, Buffer.from(answer).subarray(0, 256).toString('utf8'));
});

test('an endless answer is cut after the prefix instead of being read to the end', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => {
    res.writeHead(200);
    const chunk = 'y'.repeat(16 * 1024);
    const pump = (): void => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  });
  const result = await client(t, { timeoutMs: 3000 }).postForm(receiver.url, 'a=1');
  assert.equal(result.error, undefined, 'reading to the end would only stop at the timeout');
  assert.equal(result.responsePrefix, 'y'.repeat(256));
  assert.ok(result.latencyMs < 2000, `took ${result.latencyMs} ms`);
});

test('reuses kept-alive connections across callbacks to one receiver', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => res.end('ok'));
  const callbacks = client(t);
  for (let i = 0; i < 20; i++) {
    const result = await callbacks.postForm(receiver.url, `n=${i}`);
    assert.equal(result.statusCode, 200);
  }
  assert.equal(receiver.requests.length, 20);
  // undici's pool sees a client as busy until its drain event, so back-to-back calls alternate two sockets.
  assert.ok(receiver.connections() <= 2, `${receiver.connections()} connections for 20 callbacks`);
});

test('refuses 127.0.0.1 when it is not in allowedAddresses, and the receiver sees nothing', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => res.end('ok'));
  const result = await client(t, { allowedAddresses: [] }).postForm(receiver.url, 'a=1');
  assert.equal(result.forbidden, true);
  assert.match(result.error ?? '', /forbidden address 127\.0\.0\.1/);
  assert.equal(result.statusCode, undefined);
  assert.equal(receiver.requests.length, 0);
  assert.equal(receiver.connections(), 0);
});

test('refuses metadata, private and IPv4-mapped literals without connecting', async (t) => {
  const calls: string[] = [];
  const callbacks = client(t, { timeoutMs: 5000, lookup: fakeLookup('none', [], calls) });
  for (const [url, address] of [
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://10.0.0.1/', '10.0.0.1'],
    ['http://[::ffff:10.0.0.1]/', '10.0.0.1'],
    ['https://[::1]:8443/', '::1'],
    ['http://0xa.1/', '10.0.0.1'],
    ['http://[fd00:ec2::254]/', 'fd00:ec2::254'],
  ] as const) {
    const result = await callbacks.postForm(url, 'a=1');
    assert.equal(result.forbidden, true, url);
    assert.equal(result.error, `forbidden address ${address}`, url);
    assert.equal(result.statusCode, undefined, url);
    // Refused before any connection: an attempt on an unroutable address would wait for the 5 s timeout.
    assert.ok(result.latencyMs < 1000, `${url} took ${result.latencyMs} ms`);
  }
  assert.deepEqual(calls, [], 'literals never reach DNS');
});

test('DNS rebinding: a name that later resolves to 10.0.0.1 is refused at connect time', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => {
    res.writeHead(200, { connection: 'close' });
    res.end('ok');
  });
  const calls: string[] = [];
  const callbacks = client(t, { lookup: fakeLookup('rebind.test', [['127.0.0.1'], ['10.0.0.1']], calls) });
  const url = `http://rebind.test:${receiver.port}/cb`;

  const first = await callbacks.postForm(url, 'a=1');
  assert.equal(first.error, undefined);
  assert.equal(first.statusCode, 200);
  assert.equal(receiver.requests[0]?.headers.host, `rebind.test:${receiver.port}`);

  const second = await callbacks.postForm(url, 'a=2');
  assert.equal(second.forbidden, true);
  assert.equal(second.error, 'forbidden address 10.0.0.1 (resolved from rebind.test)');
  assert.equal(second.statusCode, undefined);
  assert.deepEqual(calls, ['rebind.test', 'rebind.test'], 'resolved again for the new connection');
  assert.equal(receiver.requests.length, 1);
});

test('a name resolving to several addresses is refused when any one of them is forbidden', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => res.end('ok'));
  const lookup = fakeLookup('multi.test', [['127.0.0.1', '10.0.0.1']]);
  const result = await client(t, { lookup }).postForm(`http://multi.test:${receiver.port}/`, 'a=1');
  assert.equal(result.forbidden, true);
  assert.match(result.error ?? '', /forbidden address 10\.0\.0\.1/);
  assert.equal(receiver.connections(), 0);
});

test('the guard also holds when net asks for a single address (autoSelectFamily off)', async (t) => {
  const before = net.getDefaultAutoSelectFamily();
  net.setDefaultAutoSelectFamily(false);
  t.after(() => net.setDefaultAutoSelectFamily(before));
  const receiver = await startReceiver(t, (_req, res) => {
    res.writeHead(200, { connection: 'close' });
    res.end('ok');
  });
  const lookup = fakeLookup('rebind.test', [['127.0.0.1'], ['::ffff:a00:1']]);
  const callbacks = client(t, { lookup });
  const url = `http://rebind.test:${receiver.port}/`;
  assert.equal((await callbacks.postForm(url, 'a=1')).statusCode, 200);
  const second = await callbacks.postForm(url, 'a=2');
  assert.equal(second.forbidden, true);
  assert.equal(second.error, 'forbidden address 10.0.0.1 (resolved from rebind.test)');
  assert.equal(receiver.requests.length, 1);
});

test('a name that does not resolve is an error, not a throw', async (t) => {
  const result = await client(t, { lookup: fakeLookup('known.test', [['127.0.0.1']]) }).postForm(
    'http://unknown.test/',
    'a=1',
  );
  assert.equal(result.statusCode, undefined);
  assert.equal(result.forbidden, undefined);
  assert.match(result.error ?? '', /not found/);
});

test('a 302 is returned as is and its Location is never requested', async (t) => {
  const receiver = await startReceiver(t, (req, res) => {
    if (req.url === '/cb') res.writeHead(302, { location: '/elsewhere' }).end();
    else res.end('followed');
  });
  const result = await client(t).postForm(`${receiver.url}/cb`, 'a=1');
  assert.equal(result.statusCode, 302);
  assert.equal(result.error, undefined);
  assert.deepEqual(
    receiver.requests.map((r) => r.path),
    ['/cb'],
  );
});

test('a receiver that never answers times out within about timeoutMs', async (t) => {
  const receiver = await startReceiver(t, () => {});
  const result = await client(t, { timeoutMs: 300 }).postForm(receiver.url, 'a=1');
  assert.match(result.error ?? '', /timeout/);
  assert.equal(result.statusCode, undefined);
  assert.equal(receiver.requests.length, 1);
  assert.ok(result.latencyMs >= 250 && result.latencyMs < 1500, `took ${result.latencyMs} ms`);
});

test('an answer that stalls after its headers times out and keeps the status code', async (t) => {
  const receiver = await startReceiver(t, (_req, res) => {
    res.writeHead(200);
    res.write('partial');
  });
  const result = await client(t, { timeoutMs: 300 }).postForm(receiver.url, 'a=1');
  assert.match(result.error ?? '', /timeout/);
  assert.equal(result.statusCode, 200);
  assert.ok(result.latencyMs >= 250 && result.latencyMs < 1500, `took ${result.latencyMs} ms`);
});

test('an answer that trickles, each byte well within the timeout, is cut at the deadline of the whole attempt', async (t) => {
  // undici's own timeouts run from one byte to the next: only the attempt's deadline bounds the whole.
  const receiver = await startReceiver(t, (_req, res) => {
    res.writeHead(200);
    const timer = setInterval(() => res.write('.'), 50);
    res.on('close', () => clearInterval(timer));
  });
  const result = await client(t, { timeoutMs: 400 }).postForm(receiver.url, 'a=1');
  assert.match(result.error ?? '', /timeout after 400 ms/);
  assert.equal(result.statusCode, 200);
  assert.ok(result.latencyMs >= 350 && result.latencyMs < 1500, `took ${result.latencyMs} ms`);
});

test('a closed port is reported as connection refused', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  const result = await client(t).postForm(`http://127.0.0.1:${port}/`, 'a=1');
  assert.equal(result.error, 'connection refused');
  assert.equal(result.statusCode, undefined);
});

test('only http and https URLs are accepted', async (t) => {
  const callbacks = client(t);
  assert.equal((await callbacks.postForm('not a url', 'a=1')).error, 'invalid URL');
  assert.match((await callbacks.postForm('ftp://127.0.0.1/', 'a=1')).error ?? '', /^invalid URL: ftp:/);
  assert.match((await callbacks.postForm('file:///etc/passwd', 'a=1')).error ?? '', /^invalid URL: file:/);
});

test('isForbiddenAddress: the refused ranges, their IPv4-mapped forms, and public addresses', () => {
  const forbidden = [
    '127.0.0.1',
    '127.255.255.254',
    '::1',
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    'fc00::1',
    'fd12:3456::1',
    '169.254.169.254',
    '169.254.0.1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '::',
    'fd00:ec2::254',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
    'ff02::1',
    '::ffff:10.0.0.1',
    '::ffff:a00:1',
    '[::ffff:127.0.0.1]',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    '::ffff:0:192.168.0.1',
    '::ffff:100.64.0.1',
  ];
  const allowed = [
    '8.8.8.8',
    '1.1.1.1',
    '2001:4860:4860::8888',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '169.253.255.255',
    '223.255.255.255',
    '::ffff:8.8.8.8',
    '2606:4700::1111',
  ];
  for (const ip of forbidden) assert.equal(isForbiddenAddress(ip, []), true, ip);
  for (const ip of allowed) assert.equal(isForbiddenAddress(ip, []), false, ip);
  assert.equal(isForbiddenAddress('example.com', []), false, 'names are judged at connect time');
});

test('isForbiddenAddress: NAT64, 6to4, site-local, benchmarking and IETF protocol ranges, edges included', () => {
  const inside = [
    // 64:ff9b::/96 (NAT64): the gateway would connect to the embedded IPv4, here 169.254.169.254.
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::',
    '64:ff9b::ffff:ffff',
    '64:ff9b::10.0.0.1',
    // 64:ff9b:1::/48 (local-use NAT64, RFC 8215) translates the same way.
    '64:ff9b:1::a9fe:a9fe',
    // 2002::/16 (6to4): 2002:a9fe:a9fe:: embeds 169.254.169.254.
    '2002::',
    '2002:a9fe:a9fe::1',
    '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    // fec0::/10 (deprecated site-local).
    'fec0::1',
    'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    // 198.18.0.0/15 (benchmarking) and 192.0.0.0/24 (IETF protocol assignments).
    '198.18.0.0',
    '198.19.255.255',
    '::ffff:198.18.0.1',
    '192.0.0.0',
    '192.0.0.170',
    '192.0.0.255',
  ];
  const outside = [
    '64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff',
    '64:ff9b::1:0:0',
    '64:ff9b:2::1',
    '2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    '2003::1',
    '198.17.255.255',
    '198.20.0.0',
    '191.255.255.255',
    '192.0.1.0',
  ];
  for (const ip of inside) assert.equal(isForbiddenAddress(ip, []), true, ip);
  for (const ip of outside) assert.equal(isForbiddenAddress(ip, []), false, ip);
});

test('allowedAddresses exempt exact addresses and CIDRs, IPv4-mapped forms included', () => {
  assert.equal(isForbiddenAddress('127.0.0.1', ['127.0.0.1']), false);
  assert.equal(isForbiddenAddress('127.0.0.2', ['127.0.0.1']), true);
  assert.equal(isForbiddenAddress('127.9.9.9', ['127.0.0.0/8']), false);
  assert.equal(isForbiddenAddress('::ffff:127.0.0.1', ['127.0.0.1']), false);
  assert.equal(isForbiddenAddress('10.0.0.1', ['127.0.0.1']), true);
  assert.equal(isForbiddenAddress('fd00::5', ['fd00::/64']), false);
  assert.equal(isForbiddenAddress('10.1.2.3', parseAllowedAddresses(['10.1.0.0/16'])), false);
  for (const bad of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.0/x', '']) {
    assert.throws(() => parseAllowedAddresses([bad]), /is not an IP address or CIDR/, bad);
  }
  assert.throws(() => createCallbackClient({ timeoutMs: 100, allowedAddresses: ['localhost'] }), TypeError);
});
