-- Checkout (issue 5): what a payment needs beyond the report row, the sandbox acquirer's own records,
-- and the merchant callbacks with every delivery attempt.

-- form_token: a random value printed in the order's pages and required back on their forms (CSRF).
-- acquirer_ref: the acquirer's reference of the payment attempt, used to enquire its status.
-- result_code: the acquirer's raw result (fpx_debit_auth_code); bank_id/bank_name: the FPX bank picked.
ALTER TABLE payments ADD COLUMN form_token TEXT;
ALTER TABLE payments ADD COLUMN acquirer_ref TEXT;
ALTER TABLE payments ADD COLUMN bank_id TEXT;
ALTER TABLE payments ADD COLUMN bank_name TEXT;
CREATE INDEX payments_awaiting_acquirer ON payments (created_at)
  WHERE status = 'pending' AND acquirer_ref IS NOT NULL;

-- The sandbox acquirer stands in for FPX banks, card and e-wallet: one row per payment attempt, with the
-- outcome a tester picked (NULL until picked; a pending code until resolved).
CREATE TABLE sandbox_payments (
  ref          TEXT PRIMARY KEY,
  order_no     TEXT NOT NULL,
  method       TEXT NOT NULL,
  bank_id      TEXT,
  amount_sen   INTEGER NOT NULL,
  outcome      TEXT,
  txn_id       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  decided_at   TEXT
) STRICT;

-- A result an acquirer reported after the payment was already final: recorded for ops, never applied.
CREATE TABLE payment_anomalies (
  id             INTEGER PRIMARY KEY,
  order_no       TEXT NOT NULL REFERENCES payments (order_no),
  stored_status  TEXT NOT NULL,
  incoming_code  TEXT NOT NULL,
  source         TEXT NOT NULL,
  seen_at        TEXT NOT NULL,
  resolved_at    TEXT,
  note           TEXT
) STRICT;

-- One row per status the merchant must hear about. fields: the form fields as JSON, unsigned: each attempt
-- signs them with the agency's current key, so a key rotated during retries does not strand them.
-- state: queued (being delivered), delivered (2xx), superseded (a newer status replaced it before it was
-- delivered), gone (the receiver answered 410), dead (gave up after the retry horizon).
CREATE TABLE callbacks (
  id               INTEGER PRIMARY KEY,
  order_no         TEXT NOT NULL REFERENCES payments (order_no),
  status           TEXT NOT NULL,
  url              TEXT NOT NULL,
  fields           TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  state            TEXT NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'delivered', 'superseded', 'gone', 'dead')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT,
  lease_until      TEXT,
  finished_at      TEXT
) STRICT;
-- Only by order: an index on state would be picked for "supersede the queued callbacks of this order"
-- and scan every queued callback of every order (the ops listing of failed ones scans; it is rare).
CREATE INDEX callbacks_by_order ON callbacks (order_no, state, id);

CREATE TABLE callback_attempts (
  id               INTEGER PRIMARY KEY,
  callback_id      INTEGER NOT NULL REFERENCES callbacks (id),
  at               TEXT NOT NULL,
  status_code      INTEGER,
  latency_ms       INTEGER NOT NULL,
  error            TEXT,
  response_prefix  TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX callback_attempts_by_callback ON callback_attempts (callback_id, id);
