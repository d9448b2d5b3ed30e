/** A real SMTP server (smtp-server) on a loopback port that parses what it takes back with mailparser. */
import type { TestContext } from 'node:test';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { onCleanup } from '../helpers.ts';

export interface ReceivedMail {
  to: string[];
  mail: ParsedMail;
  /** When the server took it (ms since the epoch). */
  at: number;
}

/**
 * `answer(nth)` is the SMTP code for the nth message (0 on): 250 takes it, anything else refuses it, after
 * its data, or with `refuseAt: 'rcpt'` at its recipient (as Postfix refuses an unknown mailbox). Refusals
 * quote the recipients, as real servers do.
 */
export async function startSmtp(
  t: TestContext,
  answer: (nth: number) => number = () => 250,
  { refuseAt = 'data' }: { refuseAt?: 'rcpt' | 'data' } = {},
): Promise<{ url: string; received: ReceivedMail[] }> {
  const received: ReceivedMail[] = [];
  let nth = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      const code = refuseAt === 'rcpt' ? answer(nth++) : 250;
      if (code === 250) return callback();
      const error = new Error(`<${address.address}>: Recipient address rejected: User unknown`);
      callback(Object.assign(error, { responseCode: code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const code = refuseAt === 'data' ? answer(nth++) : 250;
        if (code !== 250) {
          const quoted = session.envelope.rcptTo.map((r) => `<${r.address}>`).join(', ');
          callback(
            Object.assign(new Error(`${quoted}: ${code >= 500 ? 'No such mailbox' : 'Try again later'}`), {
              responseCode: code,
            }),
          );
          return;
        }
        simpleParser(Buffer.concat(chunks)).then(
          (mail) => {
            received.push({ to: session.envelope.rcptTo.map((r) => r.address), mail, at: Date.now() });
            callback();
          },
          (err: Error) => callback(err),
        );
      });
    },
  });
  // A client killed mid-session (the fault tests SIGKILL workers) resets its connection: smtp-server emits
  // that as an 'error', which a mail server logs and outlives; unheard, it would crash the test process.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(t, () => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.server.address() as { port: number };
  return { url: `smtp://127.0.0.1:${port}`, received };
}
