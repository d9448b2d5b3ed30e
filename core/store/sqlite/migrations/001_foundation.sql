-- Partners that post to the bank webhook, and their passwords (salted scrypt hashes only).
-- Several active passwords per partner let a partner rotate without downtime.
CREATE TABLE partners (
  id          TEXT PRIMARY KEY,
  created_at  TEXT NOT NULL
) STRICT;

CREATE TABLE partner_passwords (
  id          TEXT PRIMARY KEY,
  partner_id  TEXT NOT NULL REFERENCES partners (id),
  label       TEXT NOT NULL,
  hash        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT,
  UNIQUE (partner_id, label)
) STRICT;

-- Zakat agencies (tenants). Later migrations add keys, categories and the rest.
CREATE TABLE agencies (
  code        TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;

-- The archive: every webhook body answered 2xx, verbatim, so any day can be replayed.
CREATE TABLE webhook_batches (
  id             TEXT PRIMARY KEY,
  partner_id     TEXT NOT NULL REFERENCES partners (id),
  received_at    TEXT NOT NULL,
  business_date  TEXT NOT NULL,
  content_type   TEXT NOT NULL,
  body           BLOB NOT NULL,
  sha256         TEXT NOT NULL,
  record_count   INTEGER NOT NULL,
  accepted       INTEGER NOT NULL DEFAULT 0,
  duplicate      INTEGER NOT NULL DEFAULT 0,
  updated        INTEGER NOT NULL DEFAULT 0,
  conflict       INTEGER NOT NULL DEFAULT 0,
  response       TEXT
) STRICT;
CREATE INDEX webhook_batches_by_day ON webhook_batches (business_date, received_at);

-- One row per bank transaction (partner, orderno): its current version. Money in integer sen.
-- `record` is the current version as canonical JSON (keys sorted) and `content_sha256` its hash: what
-- "identical" is judged on. `time_*` and `business_date` stay those of the first version.
CREATE TABLE bank_postings (
  id                  INTEGER PRIMARY KEY,
  partner_id          TEXT NOT NULL REFERENCES partners (id),
  orderno             TEXT NOT NULL,
  bank_agency         TEXT NOT NULL,
  route               TEXT NOT NULL CHECK (route IN ('agency', 'test')),
  agency_code         TEXT,
  status              TEXT NOT NULL CHECK (status IN ('success', 'pending', 'failed')),
  amount_sen          INTEGER NOT NULL CHECK (amount_sen >= 0),
  name                TEXT NOT NULL,
  email               TEXT NOT NULL,
  time_raw            TEXT NOT NULL,
  time_utc            TEXT NOT NULL,
  business_date       TEXT NOT NULL,
  record              TEXT NOT NULL,
  content_sha256      TEXT NOT NULL,
  version             INTEGER NOT NULL,
  first_batch_id      TEXT NOT NULL REFERENCES webhook_batches (id),
  first_record_index  INTEGER NOT NULL,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  UNIQUE (partner_id, orderno)
) STRICT;
CREATE INDEX bank_postings_by_agency_day ON bank_postings (agency_code, business_date);
CREATE INDEX bank_postings_by_day ON bank_postings (business_date);

-- The history of postings that changed: every version, written when a posting gets its second one
-- (a posting that never changes has only its row above, which keeps the common path to one insert).
CREATE TABLE bank_posting_versions (
  posting_id      INTEGER NOT NULL REFERENCES bank_postings (id),
  version         INTEGER NOT NULL,
  content_sha256  TEXT NOT NULL,
  record          TEXT NOT NULL,
  status          TEXT NOT NULL,
  batch_id        TEXT NOT NULL REFERENCES webhook_batches (id),
  record_index    INTEGER NOT NULL,
  received_at     TEXT NOT NULL,
  PRIMARY KEY (posting_id, version),
  UNIQUE (posting_id, content_sha256)
) STRICT;

-- Records the bank sent that contradict what is stored: kept with both versions for ops and reconciliation.
CREATE TABLE anomalies (
  id                TEXT PRIMARY KEY,
  kind              TEXT NOT NULL,
  posting_id        INTEGER NOT NULL REFERENCES bank_postings (id),
  orderno           TEXT NOT NULL,
  reason            TEXT NOT NULL,
  stored_version    INTEGER NOT NULL,
  stored_record     TEXT NOT NULL,
  incoming_record   TEXT NOT NULL,
  incoming_sha256   TEXT NOT NULL,
  first_batch_id    TEXT NOT NULL REFERENCES webhook_batches (id),
  first_seen_at     TEXT NOT NULL,
  last_seen_at      TEXT NOT NULL,
  seen_count        INTEGER NOT NULL DEFAULT 1,
  business_date     TEXT NOT NULL,
  status            TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
  resolved_at       TEXT,
  resolution_note   TEXT,
  UNIQUE (posting_id, incoming_sha256)
) STRICT;
CREATE INDEX anomalies_by_status ON anomalies (status, first_seen_at);
