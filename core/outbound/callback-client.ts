/**
 * Merchant callbacks: a form-encoded POST to a URL the merchant chose, which makes it an SSRF vector. The
 * destination is judged on the address the socket actually connects to (inside the connector's DNS
 * lookup), so a name that resolves to a public address when checked and to 10.0.0.1 when connected
 * (DNS rebinding) is still refused. Redirects are never followed: a 3xx would be a second, unchecked URL.
 */
import dns, { type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type * as Undici from 'undici';

export interface DeliveryResult {
  /** Present when the server answered with a status line. */
  statusCode?: number;
  latencyMs: number;
  /** The first PREFIX_BYTES bytes of the answer, decoded as UTF-8 ('' when there was none). */
  responsePrefix: string;
  /** A short reason when the delivery failed (timeout, connection refused, forbidden address, ...). */
  error?: string;
  /** True when the destination was refused by the address policy (nothing was sent). */
  forbidden?: boolean;
}

/**
 * The lookup shape the connector uses. `dns.lookup` fits it; tests pass a fake. We always ask for every
 * address, so one forbidden record among several cannot slip through happy eyeballs.
 */
export type LookupAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface CallbackClientOptions {
  /** Bounds connect + response headers + reading the prefix, together. */
  timeoutMs: number;
  /** Exact IPs or CIDRs ('127.0.0.1', '127.0.0.0/8') allowed even though the policy forbids them. */
  allowedAddresses: readonly string[];
  /** Defaults to dns.lookup (which fits LookupAll). */
  lookup?: LookupAll;
  userAgent?: string;
}

export interface CallbackClient {
  /** POSTs `body` (already form-encoded) with any extra `headers`. Never rejects for network problems: the result carries them. */
  postForm(url: string, body: string, headers?: Readonly<Record<string, string>>): Promise<DeliveryResult>;
  close(): Promise<void>;
}

export const PREFIX_BYTES = 256;

/** Raised inside the connector; recognised by its code wherever undici wraps or forwards it. */
export class ForbiddenAddressError extends Error {
  readonly code = 'ERR_AMIL_FORBIDDEN_ADDRESS';
  /** The refused address, IPv4-mapped forms unwrapped; `hostname` is the name it came from, if any. */
  readonly address: string;
  constructor(
    address: string,
    readonly hostname?: string,
  ) {
    const plain = normaliseIp(address).address;
    super(hostname ? `forbidden address ${plain} (resolved from ${hostname})` : `forbidden address ${plain}`);
    this.name = 'ForbiddenAddressError';
    this.address = plain;
  }
}

// Loopback, private, link-local (cloud metadata included), CGNAT, unspecified, multicast and reserved,
// IETF protocol assignments and benchmarking. IPv4-mapped IPv6 (::ffff:a.b.c.d) is unwrapped before the
// check, so the IPv4 rules cover it.
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // Covers :: and ::1, and the deprecated IPv4-compatible ::a.b.c.d form.
  ['::', 96],
  // NAT64 (well-known and local-use prefixes) and 6to4 embed an IPv4 address that a gateway on the path
  // would connect to: 64:ff9b::a9fe:a9fe is 169.254.169.254. None is a merchant's own server.
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  // Deprecated site-local, still routed inside some networks.
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}
// AWS's IPv6 metadata endpoint; fc00::/7 already covers it, named here so nobody narrows that rule blindly.
FORBIDDEN.addAddress('fd00:ec2::254', 'ipv6');

/** Parses exact IPs and CIDRs into a BlockList; throws on anything else (a configuration mistake). */
export function parseAllowedAddresses(list: readonly string[]): BlockList {
  const allowed = new BlockList();
  for (const entry of list) {
    const [address = '', prefixText, extra] = entry.trim().split('/');
    const family = isIP(address);
    const prefix = prefixText === undefined ? undefined : Number(prefixText);
    const maxPrefix = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      extra !== undefined ||
      (prefix !== undefined && (!Number.isInteger(prefix) || prefix < 0 || prefix > maxPrefix))
    ) {
      throw new TypeError(`allowedAddresses: '${entry}' is not an IP address or CIDR`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) allowed.addAddress(address, type);
    else allowed.addSubnet(address, prefix, type);
  }
  return allowed;
}

/**
 * Strips URL brackets and an IPv6 zone id, writes IPv6 in its one canonical form (the URL serialiser's),
 * and unwraps IPv4-mapped (::ffff:a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d) IPv6 to plain IPv4.
 */
function normaliseIp(ip: string): { address: string; family: 0 | 4 | 6 } {
  let address = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  // BlockList.check answers false for 'fe80::1%eth0', which would let a scoped address through.
  const zone = address.indexOf('%');
  if (zone !== -1) address = address.slice(0, zone);
  const family = isIP(address);
  if (family !== 6) return { address, family: family === 4 ? 4 : 0 };
  address = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:(?:0:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  if (!mapped) return { address, family: 6 };
  const high = parseInt(mapped[1] ?? '0', 16);
  const low = parseInt(mapped[2] ?? '0', 16);
  return { address: [high >> 8, high & 255, low >> 8, low & 255].join('.'), family: 4 };
}

/**
 * True when `ip` is an address callbacks must not reach and `allowed` does not exempt it. Anything that is
 * not an IP literal (a host name) answers false: names are judged at connect time, on what they resolve to.
 */
export function isForbiddenAddress(ip: string, allowed: readonly string[] | BlockList = []): boolean {
  const { address, family } = normaliseIp(ip);
  if (family === 0) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (!FORBIDDEN.check(address, type)) return false;
  const exempt = Array.isArray(allowed) ? parseAllowedAddresses(allowed) : (allowed as BlockList);
  return !exempt.check(address, type);
}

/**
 * Wraps a lookup so every resolved address is judged before net connects to any of them. net calls it with
 * `{ all: true }` (autoSelectFamily, the Node 20 default) or without (then it wants one address back).
 */
function guardedLookup(resolve: LookupAll, allowed: BlockList) {
  return (
    hostname: string,
    options: dns.LookupOptions | number,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const opts: dns.LookupOptions = typeof options === 'number' ? { family: options } : { ...options };
    resolve(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      if (addresses.length === 0) {
        return callback(Object.assign(new Error(`no addresses for ${hostname}`), { code: 'ENOTFOUND' }), []);
      }
      const bad = addresses.find((a) => isForbiddenAddress(a.address, allowed));
      if (bad) return callback(new ForbiddenAddressError(bad.address, hostname), []);
      if (opts.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}

/** Host verdicts a client remembers (its merchants' URL hosts); past this many it starts again. */
const MAX_HOST_VERDICTS = 1000;

/** What an attempt past its deadline is aborted with: the reason AbortSignal.timeout gives. */
function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

/** Finds our refusal, or the first error code, along undici's cause chain. */
function describeError(err: unknown, timeoutMs: number): { error: string; forbidden?: true } {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ForbiddenAddressError) return { error: e.message, forbidden: true };
  }
  const e = err as (Error & { code?: string }) | undefined;
  const code = e?.code;
  if (
    e?.name === 'TimeoutError' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'ETIMEDOUT'
  ) {
    return { error: `timeout after ${timeoutMs} ms` };
  }
  if (code === 'ECONNREFUSED') return { error: 'connection refused' };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return { error: 'connection reset' };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { error: `host not found (${code})` };
  const message = e?.message ?? String(err);
  return { error: code && !message.includes(code) ? `${code}: ${message}` : message };
}

/** A client with one keep-alive connection pool per origin; close() it on shutdown. */
export function createCallbackClient(options: CallbackClientOptions): CallbackClient {
  const { timeoutMs } = options;
  const allowed = parseAllowedAddresses(options.allowedAddresses);
  const userAgent = options.userAgent ?? 'amil-callbacks/1';
  // undici and the agent come with the first delivery: a process that never sends a callback (a CLI run,
  // a web process in Redis mode, most test processes) does not pay the 0.3 s of CPU undici takes to load.
  let client: { agent: Undici.Agent; request: typeof Undici.request } | undefined;
  const undici = () => {
    if (client) return client;
    const { Agent, buildConnector, request } = createRequire(import.meta.url)('undici') as typeof Undici;
    const baseConnect = buildConnector({
      timeout: timeoutMs,
      lookup: guardedLookup(options.lookup ?? dns.lookup, allowed),
    });
    const agent = new Agent({
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      // net skips the lookup for IP literals, so those are judged here, still at connect time.
      connect(opts, callback) {
        if (isForbiddenAddress(opts.hostname, allowed)) {
          callback(new ForbiddenAddressError(opts.hostname), null);
          return;
        }
        baseConnect(opts, callback);
      },
    });
    return (client = { agent, request });
  };

  // The verdict on a URL's host: a pure function of the host and the allowed list, asked on every delivery
  // (8 us for an IP literal; a host name answers false here, judged at connect time). At most 1,000 hosts.
  const verdicts = new Map<string, boolean>();
  function forbiddenHost(hostname: string): boolean {
    let verdict = verdicts.get(hostname);
    if (verdict === undefined) {
      if (verdicts.size >= MAX_HOST_VERDICTS) verdicts.clear();
      verdict = isForbiddenAddress(hostname, allowed);
      verdicts.set(hostname, verdict);
    }
    return verdict;
  }

  async function postForm(
    url: string,
    body: string,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<DeliveryResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { latencyMs: elapsed(), responsePrefix: '', error: 'invalid URL' };
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      return {
        latencyMs: elapsed(),
        responsePrefix: '',
        error: `invalid URL: ${target.protocol} not allowed`,
      };
    }
    // Refuse IP literals before queueing anything: no socket, no wait, a clear answer.
    if (forbiddenHost(target.hostname)) {
      return {
        latencyMs: elapsed(),
        responsePrefix: '',
        error: new ForbiddenAddressError(target.hostname).message,
        forbidden: true,
      };
    }

    let statusCode: number | undefined;
    // The whole attempt's deadline. Not AbortSignal.timeout: its timer cannot be cancelled, so each delivery
    // left one to fire timeoutMs later (20 us to make, and thousands pending under load); this one is cleared.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(timeoutError()), timeoutMs);
    try {
      const { agent, request } = undici();
      const response = await request(target, {
        dispatcher: agent,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', 'user-agent': userAgent },
        body,
        signal: deadline.signal,
      });
      statusCode = response.statusCode;
      const chunks: Buffer[] = [];
      let size = 0;
      // Breaking out destroys the body (and that connection); a short answer read to its end keeps it alive.
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= PREFIX_BYTES) break;
      }
      const responsePrefix = Buffer.concat(chunks, size).subarray(0, PREFIX_BYTES).toString('utf8');
      return { statusCode, latencyMs: elapsed(), responsePrefix };
    } catch (err) {
      const result: DeliveryResult = {
        latencyMs: elapsed(),
        responsePrefix: '',
        ...describeError(err, timeoutMs),
      };
      if (statusCode !== undefined) result.statusCode = statusCode;
      return result;
    } finally {
      clearTimeout(timer);
    }
  }

  return { postForm, close: () => client?.agent.close() ?? Promise.resolve() };
}
