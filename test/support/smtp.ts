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

/** `answer(nth)` is the SMTP code for the nth message (0 on): 250 takes it, anything else refuses it. */
export async function startSmtp(
  t: TestContext,
  answer: (nth: number) => number = () => 250,
): Promise<{ url: string; received: ReceivedMail[] }> {
  const received: ReceivedMail[] = [];
  let nth = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const code = answer(nth);
        nth += 1;
        if (code !== 250) {
          // Quoting the recipients, as real servers do (Postfix: "<siti@...>: Recipient address rejected").
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
