import type { Db } from './db.ts';
import {
  asReceived,
  postingOfKey,
  replayBatches,
  wantedPostings,
  type StoredBatch,
} from '../archived-body.ts';
import { NOT_ACQUIRER_SOURCES } from '../payment-event-sources.ts';
import { klDayStartUtc, nextDay } from '../../time.ts';
import type { ArchivedBatch, ArchivedPayment, ReconArchiveRepository } from '../recon-archive.ts';
import { checkoutPendingSince } from '../recon-snapshot.ts';

/** The archive of webhook bodies and checkout payments, read for a replay of one day and written by one. */
export function sqliteReconArchive(db: Db): ReconArchiveRepository {
  return {
    async exportDay(
      day: string,
      asOf: Date,
    ): Promise<{ batches: ArchivedBatch[]; payments: ArchivedPayment[] }> {
      const params = {
        day,
        start: klDayStartUtc(day),
        end: klDayStartUtc(nextDay(day)),
        asOf: asOf.toISOString(),
      };
      return db.transaction(() => {
        const window = db
          .prepare<Record<string, string>, StoredBatch>(
            `SELECT id, partner_id AS partnerId, received_at AS receivedAt, body, body_encoding AS encoding
             FROM webhook_batches
             WHERE business_date >= @day AND received_at >= @start AND received_at < @asOf
             ORDER BY received_at, id`,
          )
          .all(params)
          .map(asReceived);

        const more = db
          .prepare<Record<string, string>, { partnerId: string; orderno: string }>(
            `SELECT partner_id AS partnerId, orderno FROM bank_postings
             WHERE business_date = @day AND created_at < @asOf
             UNION
             SELECT p.partner_id, p.orderno FROM ledger_entries l JOIN bank_postings p ON p.id = l.posting_id
             WHERE l.status = 'pending' AND l.received_at < @start AND l.business_date <= @day
               AND NOT EXISTS (SELECT 1 FROM ledger_entries l2 WHERE l2.sink = l.sink
                 AND l2.posting_id = l.posting_id AND l2.version > l.version AND l2.received_at < @start)`,
          )
          .all(params);
        // The postings in question, as (partner, orderno).
        const wanted = wantedPostings(window, more);

        // Earlier bodies that brought a version of one of them: excerpts with only their records.
        const ids = new Set(window.map((b) => b.id));
        const postingBatches = db.prepare<
          { partner: string; orderno: string; before: string },
          { batchId: string }
        >(
          `SELECT first_batch_id AS batchId FROM bank_postings
           WHERE partner_id = @partner AND orderno = @orderno AND created_at < @before
           UNION
           SELECT v.batch_id FROM bank_posting_versions v JOIN bank_postings p ON p.id = v.posting_id
           WHERE p.partner_id = @partner AND p.orderno = @orderno AND v.received_at < @before`,
        );
        const earlierIds = new Set<string>();
        for (const entry of wanted) {
          const [partner, orderno] = postingOfKey(entry);
          for (const { batchId } of postingBatches.all({ partner, orderno, before: params.start }))
            if (!ids.has(batchId)) earlierIds.add(batchId);
        }
        const batchById = db.prepare<[string], StoredBatch>(
          `SELECT id, partner_id AS partnerId, received_at AS receivedAt, body, body_encoding AS encoding
           FROM webhook_batches WHERE id = ?`,
        );
        const earlier = [...earlierIds]
          .map((id) => asReceived(batchById.get(id)!))
          .sort((a, b) =>
            a.receivedAt < b.receivedAt ? -1 : a.receivedAt > b.receivedAt ? 1 : a.id < b.id ? -1 : 1,
          );
        const batches = replayBatches(earlier, window, wanted);

        const orderNos = db
          .prepare<Record<string, string>, { orderNo: string }>(
            `SELECT order_no AS orderNo FROM payments WHERE created_at >= @start AND created_at < @end
             UNION SELECT order_no FROM payment_events WHERE source NOT IN ${NOT_ACQUIRER_SOURCES} AND at >= @start AND at < @asOf
             UNION SELECT order_no FROM payment_anomalies WHERE seen_at >= @start AND seen_at < @asOf
             UNION SELECT p.order_no FROM payments p JOIN payment_events e ON e.id = (SELECT max(x.id)
                 FROM payment_events x WHERE x.order_no = p.order_no AND x.source NOT IN ${NOT_ACQUIRER_SOURCES} AND x.at < @start)
               WHERE p.created_at >= @lookback AND p.created_at < @end AND e.status = 'pending'
             ORDER BY 1`,
          )
          .all({ ...params, lookback: checkoutPendingSince(params.end) });
        const paymentOf = db.prepare<[string], ArchivedPayment['payment']>(
          `SELECT order_no AS orderNo, agency_code AS agencyCode, ref_no AS refNo, extra_data AS extraData,
             payment_category AS paymentCategory, amount_sen AS amountSen, add_charge_sen AS addChargeSen, email,
             return_url AS returnUrl, payment_method AS paymentMethod, created_at AS createdAt, source,
             pay_link AS payLink, pay_link_uses AS payLinkUses
           FROM payments WHERE order_no = ?`,
        );
        const eventsOf = db.prepare<[string, string], ArchivedPayment['events'][number]>(
          `SELECT at, status, debit_auth_code AS debitAuthCode, source FROM payment_events
           WHERE order_no = ? AND at < ? ORDER BY id`,
        );
        const anomaliesOf = db.prepare<[string, string], ArchivedPayment['anomalies'][number]>(
          `SELECT stored_status AS storedStatus, incoming_code AS incomingCode, source, seen_at AS seenAt
           FROM payment_anomalies WHERE order_no = ? AND seen_at < ? ORDER BY id`,
        );
        const payments = orderNos.map(({ orderNo }) => ({
          payment: paymentOf.get(orderNo)!,
          events: eventsOf.all(orderNo, params.asOf),
          anomalies: anomaliesOf.all(orderNo, params.asOf),
        }));
        return { batches, payments };
      })();
    },

    /** Puts archived checkout payments into a (replay) store as they were: the row, its events, anomalies. */
    async importPayments(payments: readonly ArchivedPayment[]): Promise<void> {
      const insertPayment = db.prepare(
        `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, payment_category, amount_sen,
           add_charge_sen, email, return_url, payment_method, status, created_at, updated_at, source, pay_link,
           pay_link_uses)
         VALUES (@orderNo, @agencyCode, @refNo, @extraData, @paymentCategory, @amountSen, @addChargeSen, @email,
           @returnUrl, @paymentMethod, @status, @createdAt, @updatedAt, @source, @payLink, @payLinkUses)`,
      );
      const insertEvent = db.prepare(
        `INSERT INTO payment_events (order_no, at, status, debit_auth_code, source)
         VALUES (@orderNo, @at, @status, @debitAuthCode, @source)`,
      );
      const insertAnomaly = db.prepare(
        `INSERT INTO payment_anomalies (order_no, stored_status, incoming_code, source, seen_at)
         VALUES (@orderNo, @storedStatus, @incomingCode, @source, @seenAt)`,
      );
      db.transaction(() => {
        for (const { payment, events, anomalies } of payments) {
          const last = events.at(-1);
          insertPayment.run({
            ...payment,
            source: payment.source ?? 'checkout',
            payLink: payment.payLink ?? null,
            payLinkUses: payment.payLinkUses ?? null,
            status: last?.status ?? 'pending',
            updatedAt: last?.at ?? payment.createdAt,
          });
          for (const event of events) insertEvent.run({ orderNo: payment.orderNo, ...event });
          for (const anomaly of anomalies) insertAnomaly.run({ orderNo: payment.orderNo, ...anomaly });
        }
      }).immediate();
    },
  };
}
