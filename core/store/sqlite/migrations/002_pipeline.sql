-- The transactional outbox: work a committed fact causes, written in the same transaction as the fact.
-- A relay hands each row to its queue and marks it sent; jobs are idempotent, so a row handed over twice
-- (a crash between hand-over and mark) converges.
CREATE TABLE outbox (
  id          INTEGER PRIMARY KEY,
  queue       TEXT NOT NULL,
  job_id      TEXT NOT NULL UNIQUE,
  payload     TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT,
  next_try_at TEXT,
  failed_at   TEXT,
  sent_at     TEXT
) STRICT;
CREATE INDEX outbox_pending ON outbox (id) WHERE sent_at IS NULL AND failed_at IS NULL;

-- The normalise job reads a batch's posting versions by batch id.
CREATE INDEX bank_postings_by_first_batch ON bank_postings (first_batch_id);
CREATE INDEX bank_posting_versions_by_batch ON bank_posting_versions (batch_id);

-- Each version of a bank posting in canonical form, with its exception codes (pipeline/normalise).
CREATE TABLE normalised_postings (
  posting_id        INTEGER NOT NULL REFERENCES bank_postings (id),
  version           INTEGER NOT NULL,
  batch_id          TEXT NOT NULL REFERENCES webhook_batches (id),
  sink              TEXT NOT NULL,
  orderno           TEXT NOT NULL,
  bank_agency       TEXT NOT NULL,
  status            TEXT NOT NULL,
  amount_sen        INTEGER NOT NULL,
  name              TEXT NOT NULL,
  email             TEXT NOT NULL,
  time_utc          TEXT NOT NULL,
  business_date     TEXT NOT NULL,
  received_date     TEXT NOT NULL,
  zakat_name        TEXT,
  ic_no             TEXT,
  phone             TEXT,
  state             TEXT,
  type_raw          TEXT,
  type              TEXT,
  year              TEXT,
  address           TEXT,
  postcode          TEXT,
  city              TEXT,
  zakat_amount_sen  INTEGER,
  rate_sen          INTEGER,
  dependants        INTEGER,
  exceptions        TEXT NOT NULL,
  normalised_at     TEXT NOT NULL,
  PRIMARY KEY (posting_id, version)
) STRICT;
CREATE INDEX normalised_by_batch ON normalised_postings (batch_id, sink);

-- Per-agency ledger (sink: an agency code, or '#test' for the bank's live tests): one entry per posting
-- version. The latest version is the posting's state; a version received on a later day than the
-- posting's business day is an adjustment of that day.
CREATE TABLE ledger_entries (
  sink           TEXT NOT NULL,
  posting_id     INTEGER NOT NULL REFERENCES bank_postings (id),
  version        INTEGER NOT NULL,
  business_date  TEXT NOT NULL,
  received_date  TEXT NOT NULL,
  is_adjustment  INTEGER NOT NULL CHECK (is_adjustment IN (0, 1)),
  status         TEXT NOT NULL,
  amount_sen     INTEGER NOT NULL,
  exceptions     TEXT NOT NULL,
  created_at     TEXT NOT NULL,
  PRIMARY KEY (sink, posting_id, version)
) STRICT;
CREATE INDEX ledger_by_day ON ledger_entries (sink, business_date);
CREATE INDEX ledger_adjustments ON ledger_entries (sink, received_date) WHERE is_adjustment = 1;
