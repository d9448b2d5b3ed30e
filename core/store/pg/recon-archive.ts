/**
 * The archive a replay reads and writes, on PostgreSQL (the SQLite twin: ../sqlite/recon-archive.ts): a
 * day's export is read from one snapshot (REPEATABLE READ, read only), so it is one moment's archive.
 */
import { NOT_ACQUIRER_SOURCES } from '../payment-event-sources.ts';
import { klDayStartUtc, nextDay } from '../../time.ts';
import {
  asReceived,
  postingOfKey,
  replayBatches,
  wantedPostings,
  type StoredBatch,
} from '../archived-body.ts';
import { statement, type PgDb } from './pool.ts';
import { inSnapshot } from './snapshot-read.ts';
import type { ArchivedPayment, ReconArchiveRepository } from '../recon-archive.ts';
import { checkoutPendingSince } from '../recon-snapshot.ts';

// $1 day, $2 start, $3 as-of.
const WINDOW = statement(
  `SELECT id, partner_id AS "partnerId", received_at AS "receivedAt", body, body_encoding AS encoding
   FROM webhook_batches WHERE business_date >= $1 AND received_at >= $2 AND received_at < $3
   ORDER BY received_at, id`,
);
const MORE_POSTINGS = statement(
  `SELECT partner_id AS "partnerId", orderno FROM bank_postings WHERE business_date = $1 AND created_at < $3
   UNION
   SELECT p.partner_id, p.orderno FROM ledger_entries l JOIN bank_postings p ON p.id = l.posting_id
   WHERE l.status = 'pending' AND l.received_at < $2 AND l.business_date <= $1
     AND NOT EXISTS (SELECT 1 FROM ledger_entries l2 WHERE l2.sink = l.sink
       AND l2.posting_id = l.posting_id AND l2.version > l.version AND l2.received_at < $2)`,
);
// $1 partner, $2 orderno, $3 before.
const POSTING_BATCHES = statement(
  `SELECT first_batch_id AS "batchId" FROM bank_postings
   WHERE partner_id = $1 AND orderno = $2 AND created_at < $3
   UNION
   SELECT v.batch_id FROM bank_posting_versions v JOIN bank_postings p ON p.id = v.posting_id
   WHERE p.partner_id = $1 AND p.orderno = $2 AND v.received_at < $3`,
);
const BATCHES_BY_ID = statement(
  `SELECT id, partner_id AS "partnerId", received_at AS "receivedAt", body, body_encoding AS encoding
   FROM webhook_batches WHERE id = ANY($1::text[]) ORDER BY received_at, id`,
);
// $1 start, $2 end, $3 as-of, $4 lookback.
const ORDER_NOS = statement(
  `SELECT order_no AS "orderNo" FROM payments WHERE created_at >= $1 AND created_at < $2
   UNION SELECT order_no FROM payment_events
     WHERE source NOT IN ${NOT_ACQUIRER_SOURCES} AND at >= $1 AND at < $3
   UNION SELECT order_no FROM payment_anomalies WHERE seen_at >= $1 AND seen_at < $3
   UNION SELECT p.order_no FROM payments p JOIN payment_events e ON e.id = (SELECT max(x.id)
       FROM payment_events x WHERE x.order_no = p.order_no AND x.source NOT IN ${NOT_ACQUIRER_SOURCES}
         AND x.at < $1)
     WHERE p.created_at >= $4 AND p.created_at < $2 AND e.status = 'pending'
   ORDER BY 1`,
);
const PAYMENTS = statement(
  `SELECT order_no AS "orderNo", agency_code AS "agencyCode", ref_no AS "refNo", extra_data AS "extraData",
     payment_category AS "paymentCategory", amount_sen AS "amountSen", add_charge_sen AS "addChargeSen", email,
     return_url AS "returnUrl", payment_method AS "paymentMethod", created_at AS "createdAt", source,
     pay_link AS "payLink", pay_link_uses AS "payLinkUses"
   FROM payments WHERE order_no = ANY($1::text[])`,
);
const EVENTS = statement(
  `SELECT order_no AS "orderNo", at, status, debit_auth_code AS "debitAuthCode", source FROM payment_events
   WHERE order_no = ANY($1::text[]) AND at < $2 ORDER BY id`,
);
const ANOMALIES = statement(
  `SELECT order_no AS "orderNo", stored_status AS "storedStatus", incoming_code AS "incomingCode", source,
     seen_at AS "seenAt"
   FROM payment_anomalies WHERE order_no = ANY($1::text[]) AND seen_at < $2 ORDER BY id`,
);
const INSERT_PAYMENT = statement(
  `INSERT INTO payments (order_no, agency_code, ref_no, extra_data, payment_category, amount_sen,
     add_charge_sen, email, return_url, payment_method, status, created_at, updated_at, source, pay_link,
     pay_link_uses)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
);
const INSERT_EVENT = statement(
  'INSERT INTO payment_events (order_no, at, status, debit_auth_code, source) VALUES ($1, $2, $3, $4, $5)',
);
const INSERT_ANOMALY = statement(
  `INSERT INTO payment_anomalies (order_no, stored_status, incoming_code, source, seen_at)
   VALUES ($1, $2, $3, $4, $5)`,
);

/** Groups rows by their order number, keeping their order, without it. */
function byOrder<T extends { orderNo: string }>(rows: T[]): Map<string, Omit<T, 'orderNo'>[]> {
  const map = new Map<string, Omit<T, 'orderNo'>[]>();
  for (const { orderNo, ...rest } of rows) {
    const list = map.get(orderNo) ?? [];
    list.push(rest);
    map.set(orderNo, list);
  }
  return map;
}

/** The archive of webhook bodies and checkout payments, read for a replay of one day and written by one. */
export function pgReconArchive(db: PgDb): ReconArchiveRepository {
  return {
    async exportDay(day, asOf) {
      const start = klDayStartUtc(day);
      const end = klDayStartUtc(nextDay(day));
      const asOfIso = asOf.toISOString();
      return inSnapshot(db, async (tx) => {
        const window = (await tx.rows<StoredBatch>(WINDOW, [day, start, asOfIso])).map(asReceived);

        // The postings in question, as (partner, orderno).
        const more = await tx.rows<{ partnerId: string; orderno: string }>(MORE_POSTINGS, [
          day,
          start,
          asOfIso,
        ]);
        const wanted = wantedPostings(window, more);

        // Earlier bodies that brought a version of one of them: excerpts with only their records.
        const ids = new Set(window.map((b) => b.id));
        const earlierIds = new Set<string>();
        for (const entry of wanted) {
          const [partner, orderno] = postingOfKey(entry);
          for (const { batchId } of await tx.rows<{ batchId: string }>(POSTING_BATCHES, [
            partner,
            orderno,
            start,
          ]))
            if (!ids.has(batchId)) earlierIds.add(batchId);
        }
        // (received_at, id) order, as SQLite sorts them: ids compared bytewise in the C collation.
        const earlier = (await tx.rows<StoredBatch>(BATCHES_BY_ID, [[...earlierIds]])).map(asReceived);
        const batches = replayBatches(earlier, window, wanted);

        const orderNos = (
          await tx.rows<{ orderNo: string }>(ORDER_NOS, [start, end, asOfIso, checkoutPendingSince(end)])
        ).map((r) => r.orderNo);
        const rows = await tx.rows<ArchivedPayment['payment'] & { orderNo: string }>(PAYMENTS, [orderNos]);
        const paymentOf = new Map(rows.map((row) => [row.orderNo, row]));
        const events = byOrder(
          await tx.rows<ArchivedPayment['events'][number] & { orderNo: string }>(EVENTS, [orderNos, asOfIso]),
        );
        const anomalies = byOrder(
          await tx.rows<ArchivedPayment['anomalies'][number] & { orderNo: string }>(ANOMALIES, [
            orderNos,
            asOfIso,
          ]),
        );
        const payments = orderNos.map((orderNo) => ({
          payment: paymentOf.get(orderNo)!,
          events: events.get(orderNo) ?? [],
          anomalies: anomalies.get(orderNo) ?? [],
        }));
        return { batches, payments };
      });
    },

    async importPayments(payments) {
      await db.transaction(async (tx) => {
        for (const { payment, events, anomalies } of payments) {
          const last = events.at(-1);
          await tx.run(INSERT_PAYMENT, [
            payment.orderNo,
            payment.agencyCode,
            payment.refNo,
            payment.extraData,
            payment.paymentCategory,
            payment.amountSen,
            payment.addChargeSen,
            payment.email,
            payment.returnUrl,
            payment.paymentMethod,
            last?.status ?? 'pending',
            payment.createdAt,
            last?.at ?? payment.createdAt,
            payment.source ?? 'checkout',
            payment.payLink ?? null,
            payment.payLinkUses ?? null,
          ]);
          for (const e of events)
            await tx.run(INSERT_EVENT, [payment.orderNo, e.at, e.status, e.debitAuthCode, e.source]);
          for (const a of anomalies)
            await tx.run(INSERT_ANOMALY, [
              payment.orderNo,
              a.storedStatus,
              a.incomingCode,
              a.source,
              a.seenAt,
            ]);
        }
      });
    },
  };
}
