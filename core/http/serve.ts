import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export interface Listening {
  readonly servers: readonly { name: string; url: string }[];
  /** Stops accepting, lets in-flight requests finish within graceMs, then cuts what is left. */
  close(graceMs: number): Promise<void>;
}

/** Starts one HTTP server per app and resolves once all listen. */
export async function listen(
  entries: readonly { name: string; app: Koa; host: string; port: number }[],
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
          server.once('error', reject);
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
