-- Nightly reconciliation (issue 7): the reads of a workbook, and the record of every run and e-mail.

-- A workbook shows a day as of an instant (its run's as-of time), so each ledger entry keeps the exact
-- time its version was received (its batch's), not only the day. Entries already there are backfilled.
ALTER TABLE ledger_entries ADD COLUMN received_at TEXT NOT NULL DEFAULT '';
UPDATE ledger_entries SET received_at = (
  SELECT b.received_at FROM normalised_postings n JOIN webhook_batches b ON b.id = n.batch_id
  WHERE n.posting_id = ledger_entries.posting_id AND n.version = ledger_entries.version);
CREATE INDEX ledger_by_received ON ledger_entries (sink, received_at);
CREATE INDEX ledger_pending ON ledger_entries (sink, received_at) WHERE status = 'pending';
CREATE INDEX payment_events_by_at ON payment_events (at) WHERE source <> 'checkout';

-- One row per run of one sink (an agency, or '#test' for the bank's live tests) and business day.
-- as_of: the instant the day was read as of (versions received later are not in it); a replay reads the
-- archive as of the same instant. fingerprint: SHA-256 of everything the workbook shows.
-- file: the workbook's path relative to DATA_DIR; changes: what differs from the previous run of the day.
CREATE TABLE recon_runs (
  id            INTEGER PRIMARY KEY,
  sink          TEXT NOT NULL,
  business_date TEXT NOT NULL,
  trigger       TEXT NOT NULL CHECK (trigger IN ('nightly', 'manual', 'replay')),
  as_of         TEXT NOT NULL,
  started_at    TEXT NOT NULL,
  finished_at   TEXT NOT NULL,
  fingerprint   TEXT NOT NULL,
  file          TEXT NOT NULL,
  file_sha256   TEXT NOT NULL,
  file_bytes    INTEGER NOT NULL,
  input_counts  TEXT NOT NULL,
  totals        TEXT NOT NULL,
  previous_run  INTEGER REFERENCES recon_runs (id),
  changes       TEXT
) STRICT;
CREATE INDEX recon_runs_by_day ON recon_runs (sink, business_date, id);

-- Every attempt to e-mail a run's workbook: the outbox job retries until one is sent.
CREATE TABLE recon_deliveries (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES recon_runs (id),
  recipients  TEXT NOT NULL,
  attempt     INTEGER NOT NULL,
  at          TEXT NOT NULL,
  outcome     TEXT NOT NULL CHECK (outcome IN ('sent', 'failed')),
  message_id  TEXT,
  detail      TEXT
) STRICT;
CREATE INDEX recon_deliveries_by_run ON recon_deliveries (run_id, id);
