import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface Listening {
  readonly servers: readonly { name: string; url: string }[];
  /** Stops accepting, lets in-flight requests finish within graceMs, then cuts what is left. */
  close(graceMs: number): Promise<void>;
}

/** The port a server was to listen on is taken (most often: another amil already runs there). */
export class PortInUseError extends Error {
  override name = 'PortInUseError';
  constructor(
    readonly port: number,
    readonly host: string,
    setting: string,
  ) {
    super(`port ${port} is in use; set ${setting} to a free port (e.g. ${setting}=${port + 1} npm start)`);
  }
}

/**
 * Starts one HTTP server per app and resolves once all listen. A taken port rejects with PortInUseError,
 * naming the entry's `setting` (the variable that chooses the port).
 */
export async function listen(
  entries: readonly { name: string; app: Koa; host: string; port: number; setting?: string }[],
): Promise<Listening> {
  const started = await Promise.all(
    entries.map(
      (entry) =>
        new Promise<{ name: string; server: http.Server; url: string }>((resolve, reject) => {
          const handle = entry.app.callback();
          const server = http.createServer((req, res) => {
            void handle(req, res);
          });
          // Keep-alive sockets outliving the load balancer's idle timeout cause spurious resets.
          server.keepAliveTimeout = 65_000;
          server.once('error', (err: NodeJS.ErrnoException) =>
            reject(
              err.code === 'EADDRINUSE'
                ? new PortInUseError(entry.port, entry.host, entry.setting ?? 'the port')
                : err,
            ),
          );
          server.listen(entry.port, entry.host, () => {
            const { port } = server.address() as AddressInfo;
            const host = entry.host.includes(':') ? `[${entry.host}]` : entry.host;
            resolve({ name: entry.name, server, url: `http://${host}:${port}` });
          });
        }),
    ),
  );
  return {
    servers: started.map(({ name, url }) => ({ name, url })),
    async close(graceMs) {
      await Promise.all(
        started.map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
              // A keep-alive connection turns idle once its in-flight response is sent: close it then.
              const sweep = setInterval(() => server.closeIdleConnections(), 50);
              server.close(() => {
                clearTimeout(deadline);
                clearInterval(sweep);
                resolve();
              });
              server.closeIdleConnections();
            }),
        ),
      );
    },
  };
}
