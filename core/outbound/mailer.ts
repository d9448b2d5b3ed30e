import { mkdirSync, writeFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';

export interface MailAttachment {
  filename: string;
  path: string;
  contentType: string;
}

export interface MailMessage {
  to: readonly string[];
  subject: string;
  text: string;
  /** An HTML alternative of `text` (multipart/alternative), already escaped. */
  html?: string;
  /** Overrides the mailer's sender (receipts come from their own address). */
  from?: string;
  /** A fixed Message-ID (`<id@domain>`), so a message sent again is recognisably the same one. */
  messageId?: string;
  /** The Message-ID this message follows up (a correction of an earlier e-mail): threads it in mail clients. */
  inReplyTo?: string;
  attachments?: readonly MailAttachment[];
}

export interface Mailer {
  /** Sends one message; resolves with its Message-ID (and the .eml file in file mode), throws on failure. */
  send(message: MailMessage): Promise<{ messageId: string; file?: string }>;
  close(): void;
}

/**
 * Outgoing e-mail through nodemailer: SMTP when `smtpUrl` is set, otherwise each message is built by
 * nodemailer's stream transport (the same MIME) and written as an `.eml` file under `dir`, so embedded
 * mode needs no mail server and a user can open what would have been sent.
 */
export function createMailer(options: {
  smtpUrl: string | undefined;
  from: string;
  dir: string;
  timeoutMs: number;
}): Mailer {
  const mailOf = (message: MailMessage) => ({
    ...message,
    from: message.from ?? options.from,
    ...(message.inReplyTo ? { references: [message.inReplyTo] } : {}),
    to: [...message.to],
    attachments: [...(message.attachments ?? [])],
  });
  if (options.smtpUrl) {
    // Every step bounded (nodemailer's own defaults wait up to 10 minutes on a silent server), so an attempt
    // that a dead worker left behind is known to be over within a lease derived from the same figure.
    const transport = nodemailer.createTransport({
      url: options.smtpUrl,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
    });
    return {
      async send(message) {
        const info = await transport.sendMail(mailOf(message));
        return { messageId: info.messageId };
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(message) {
      const info = await transport.sendMail(mailOf(message));
      mkdirSync(options.dir, { recursive: true });
      // A name that sorts by time and says what it is: 2026-11-22T02-31-37-448Z-Zakat-reconciliation-....eml
      const subject = message.subject
        .replace(/[^A-Za-z0-9]+/g, '-')
        .replace(/^-|-$/g, '')
        .slice(0, 80);
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${subject}-${randomUUID().slice(0, 8)}.eml`;
      const file = path.join(options.dir, name);
      writeFileSync(`${file}.tmp`, info.message as Buffer);
      renameSync(`${file}.tmp`, file);
      return { messageId: info.messageId, file };
    },
    close: () => transport.close(),
  };
}
