import path from 'node:path';
import type { Deps } from '../../core/deps.ts';
import { withoutAddresses } from '../../core/email.ts';
import { RECEIPT_QUEUE, receiptJobId } from '../../core/queues.ts';
import type { ReceiptJob } from '../../schemas/index.ts';
import { receiptMail } from '../receipts/mail.ts';
import { BusyJobError, PermanentJobError, type JobDefinition } from './types.ts';

/**
 * E-mails a paid order's receipt to the payer (through the same mailer as the nightly e-mail: SMTP, or an
 * .eml file). Never twice: a receipt already sent is skipped, and an attempt leases it so two workers
 * cannot send it at once; every attempt is recorded. The Message-ID is the order's, so the rare resend (a
 * crash after the server took it, before it was recorded) is recognisably the same message. A permanent
 * refusal (5xx: no such mailbox) is recorded and not retried; anything else is, on the retry policy.
 */
export const receiptJob: JobDefinition<ReceiptJob> = {
  name: 'receipt',
  handles: (queue) => queue === RECEIPT_QUEUE,
  jobId: receiptJobId,
  payloadSchema: 'https://schemas.amil.my/jobs/receipt-job.json',
  retry: { horizonMs: (pipeline) => pipeline.retryHorizonMs.receipt },
  // Each waits on a mail server, not on this process.
  concurrency: 8,
  async process(data: ReceiptJob, deps: Deps): Promise<void> {
    const started = deps.clock.now();
    // How long one attempt may hold the receipt: past the mailer's timeouts of connecting, the greeting and
    // a silent server, so a worker that died mid-send holds it minutes, not the quarter hour it once did.
    const leaseUntil = new Date(started.getTime() + 3 * deps.config.mail.timeoutMs + 5000).toISOString();
    const claim = await deps.store.receipts.claim(data.orderNo, started.toISOString(), leaseUntil);
    if ('refused' in claim) {
      if (claim.refused === 'done') return;
      throw new BusyJobError(`the receipt of ${data.orderNo} is being sent by another attempt`);
    }
    const { claimed: receipt, attempt } = claim;
    const order = await deps.store.orders.order(receipt.orderNo);
    if (!order) throw new PermanentJobError(`no order ${receipt.orderNo}`);
    const agency = await deps.store.agencies.get(order.agencyCode);
    const mail = receiptMail(order, agency?.name ?? order.agencyCode, deps.acquirer?.sandbox === true);
    const at = started.toISOString();
    try {
      const sent = await deps.mailer.send({
        to: [receipt.recipient],
        from: deps.config.mail.receiptFrom,
        messageId: `<receipt.${order.orderNo}@${domainOf(deps.config.mail.receiptFrom)}>`,
        ...mail,
      });
      await deps.store.receipts.recordAttempt(receipt.id, {
        attempt,
        at,
        outcome: 'sent',
        messageId: sent.messageId,
        detail: sent.file ? path.relative(deps.config.dataDir, sent.file) : null,
      });
      deps.logger.info({ order_no: order.orderNo, attempt }, 'receipt sent');
    } catch (error) {
      const code = (error as { responseCode?: unknown }).responseCode;
      const refused = typeof code === 'number' && code >= 500 && code < 600;
      // The payer's address stays out of what is recorded and thrown: a mail server quotes the recipient it
      // refuses, and nodemailer's error carries it in its message, `response` and `rejected` fields, all of
      // which the log line, the outbox's last error and BullMQ's failed reason in Redis would keep.
      const reason = withoutAddresses(String((error as Error).message));
      await deps.store.receipts.recordAttempt(receipt.id, {
        attempt,
        at,
        outcome: refused ? 'refused' : 'failed',
        messageId: null,
        detail: reason.slice(0, 500),
      });
      // A mailbox that does not exist will not exist in an hour either.
      if (refused) throw new PermanentJobError(`receipt of ${order.orderNo} refused: ${reason}`);
      throw new Error(reason);
    }
  },
};

/** The domain of a sender (`Name <a@b.example>` or `a@b.example`), for Message-IDs. */
export function domainOf(sender: string): string {
  return /@([^\s<>@]+?)>?\s*$/.exec(sender)?.[1] ?? 'amil.invalid';
}
