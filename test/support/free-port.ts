/**
 * A loopback port nobody listens on right now, for the servers the tests start (and for a dependency that is
 * down). Chosen below the kernel's ephemeral range: a port from `listen(0)` is one the kernel also hands to
 * outgoing connections, so between choosing it and the server binding it (an app's start takes a moment),
 * any connection of a test file running alongside could take it and the server would find it in use.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port the kernel gives outgoing connections (Linux's default when it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2048 ? low : 32768;
  } catch {
    return 32768;
  }
}

const LOW = ephemeralLow();
const FIRST = Math.max(1024, LOW - 16384);
/** Ports this process has handed out: two servers of one test never get the same one. */
const given = new Set<number>();

function bindable(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = FIRST + Math.floor(Math.random() * (LOW - FIRST));
    if (given.has(port)) continue;
    if (await bindable(port)) {
      given.add(port);
      return port;
    }
  }
  throw new Error(`no free loopback port between ${FIRST} and ${LOW - 1}`);
}
