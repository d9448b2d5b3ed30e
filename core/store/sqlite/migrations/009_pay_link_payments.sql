-- pragma: foreign_keys=off
-- Pay-link payments (issue 12): a visitor of a pay link or QR code gets an order of their own, so a pay
-- link can never squat, resume or kill a merchant's order or another visitor's.
--
-- The merchant's refNo stays unique per agency for checkout orders only: the table's UNIQUE (agency_code,
-- ref_no) becomes a partial unique index, which in SQLite means rebuilding the table (foreign keys are
-- off for this migration and checked before it commits; see db.ts).
--
-- source: 'checkout' (POST /v2/checkout, the merchant's order) or 'pay-link' (the pay page).
-- pay_link: for a pay-link payment, the link it came from (path and signed query, no origin), which the
--   agency's reports show; pay_link_uses: 'once' (a household's fitrah QR: paid once) or 'many' (a mosque
--   poster), chosen by whoever signed the link (unsigned links are 'many').
CREATE TABLE payments_new (
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
  form_token        TEXT,
  acquirer_ref      TEXT,
  bank_id           TEXT,
  bank_name         TEXT,
  extras            TEXT,
  source            TEXT NOT NULL DEFAULT 'checkout' CHECK (source IN ('checkout', 'pay-link')),
  pay_link          TEXT,
  pay_link_uses     TEXT CHECK (pay_link_uses IN ('once', 'many'))
) STRICT;

-- Orders made on the pay page before this migration have no returnUrl: they were pay-link orders, each
-- paid once (their link is not known any more).
INSERT INTO payments_new
  SELECT order_no, agency_code, ref_no, extra_data, payment_category, amount_sen, add_charge_sen, email,
    return_url, payment_method, status, debit_auth_code, fpx_txn_id, fpx_txn_time, created_at, updated_at,
    form_token, acquirer_ref, bank_id, bank_name, extras,
    CASE WHEN return_url = '' THEN 'pay-link' ELSE 'checkout' END, NULL,
    CASE WHEN return_url = '' THEN 'once' END
  FROM payments;

DROP TABLE payments;
ALTER TABLE payments_new RENAME TO payments;

CREATE UNIQUE INDEX payments_merchant_ref ON payments (agency_code, ref_no) WHERE source = 'checkout';
CREATE INDEX payments_by_ref ON payments (agency_code, ref_no, created_at);
CREATE INDEX payments_by_pay_link ON payments (pay_link, status) WHERE pay_link IS NOT NULL;
CREATE INDEX payments_by_agency_created ON payments (agency_code, created_at, order_no, status);
CREATE INDEX payments_by_email ON payments (email, agency_code);
CREATE INDEX payments_awaiting_acquirer ON payments (created_at)
  WHERE status = 'pending' AND acquirer_ref IS NOT NULL;
-- The sweep that expires orders nobody took to the bank.
CREATE INDEX payments_unpaid ON payments (created_at) WHERE status = 'pending' AND acquirer_ref IS NULL;

CREATE TRIGGER payments_count_insert AFTER INSERT ON payments BEGIN
  INSERT INTO payment_day_counts (agency_code, day, approved, n)
    VALUES (new.agency_code, date(new.created_at, '+8 hours'), new.status = 'success', 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER payments_count_delete AFTER DELETE ON payments BEGIN
  UPDATE payment_day_counts SET n = n - 1
    WHERE agency_code = old.agency_code AND day = date(old.created_at, '+8 hours')
      AND approved = (old.status = 'success');
END;

CREATE TRIGGER payments_count_update AFTER UPDATE OF agency_code, created_at, status ON payments
  WHEN old.agency_code IS NOT new.agency_code OR old.created_at IS NOT new.created_at
    OR (old.status = 'success') IS NOT (new.status = 'success')
BEGIN
  UPDATE payment_day_counts SET n = n - 1
    WHERE agency_code = old.agency_code AND day = date(old.created_at, '+8 hours')
      AND approved = (old.status = 'success');
  INSERT INTO payment_day_counts (agency_code, day, approved, n)
    VALUES (new.agency_code, date(new.created_at, '+8 hours'), new.status = 'success', 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

-- Where the sandbox sends the payer back (the order's return page, with its token: issue 12).
ALTER TABLE sandbox_payments ADD COLUMN return_path TEXT;
