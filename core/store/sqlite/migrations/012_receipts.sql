-- Payer receipts (issue 14): one per paid order, queued in the settlement's own transaction.

-- order_no is UNIQUE: an order has one receipt however often its settlement or job runs. state: queued
-- until an attempt is sent; refused when the mail server refused it for good (a 5xx, e.g. no such
-- mailbox). lease_until: an attempt in flight, so two workers never send the same receipt at once.
CREATE TABLE receipts (
  id           INTEGER PRIMARY KEY,
  order_no     TEXT NOT NULL UNIQUE REFERENCES payments (order_no),
  recipient    TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'sent', 'refused')),
  lease_until  TEXT,
  sent_at      TEXT,
  message_id   TEXT
) STRICT;

-- Every attempt to send a receipt, its outcome and the mail server's answer (or the .eml file written).
CREATE TABLE receipt_attempts (
  id          INTEGER PRIMARY KEY,
  receipt_id  INTEGER NOT NULL REFERENCES receipts (id),
  attempt     INTEGER NOT NULL,
  at          TEXT NOT NULL,
  outcome     TEXT NOT NULL CHECK (outcome IN ('sent', 'failed', 'refused')),
  message_id  TEXT,
  detail      TEXT
) STRICT;
CREATE INDEX receipt_attempts_by_receipt ON receipt_attempts (receipt_id, id);
