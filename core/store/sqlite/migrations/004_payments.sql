-- Checkout orders and their payments. Checkout (issue 5) writes them; the report API reads them.
-- order_no is the service order number, reported as fpx_seller_order_no. Money in integer sen.
CREATE TABLE payments (
  order_no          TEXT PRIMARY KEY,
  agency_code       TEXT NOT NULL REFERENCES agencies (code),
  ref_no            TEXT NOT NULL,
  extra_data        TEXT,
  payment_category  TEXT,
  amount_sen        INTEGER NOT NULL CHECK (amount_sen >= 100),
  add_charge_sen    INTEGER NOT NULL DEFAULT 0 CHECK (add_charge_sen >= 0),
  email             TEXT NOT NULL,
  return_url        TEXT NOT NULL,
  payment_method    TEXT CHECK (payment_method IN ('fpx', 'card', 'ewallet')),
  status            TEXT NOT NULL CHECK (status IN ('pending', 'success', 'failed')),
  debit_auth_code   TEXT,
  fpx_txn_id        TEXT,
  fpx_txn_time      TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  UNIQUE (agency_code, ref_no)
) STRICT;
CREATE INDEX payments_by_agency_created ON payments (agency_code, created_at, order_no);
CREATE INDEX payments_by_email ON payments (email, agency_code);

-- Every status a payment went through, for the order lookup.
CREATE TABLE payment_events (
  id               INTEGER PRIMARY KEY,
  order_no         TEXT NOT NULL REFERENCES payments (order_no),
  at               TEXT NOT NULL,
  status           TEXT NOT NULL,
  debit_auth_code  TEXT,
  source           TEXT NOT NULL
) STRICT;
CREATE INDEX payment_events_by_order ON payment_events (order_no, id);
