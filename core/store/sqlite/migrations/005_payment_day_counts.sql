-- Payment counts per agency, Kuala Lumpur business day and approval, kept by triggers in the same
-- transaction as the payment itself. The payment report sums these for stats.total_pages instead of
-- counting rows, and uses them to find the day a page starts on, so that a page costs the same on day one
-- and on day one thousand (docs/decisions.md, "Report paging by day counts").
CREATE TABLE payment_day_counts (
  agency_code  TEXT NOT NULL,
  day          TEXT NOT NULL,
  approved     INTEGER NOT NULL,
  n            INTEGER NOT NULL CHECK (n >= 0),
  PRIMARY KEY (agency_code, day, approved)
) STRICT, WITHOUT ROWID;

INSERT INTO payment_day_counts (agency_code, day, approved, n)
  SELECT agency_code, date(created_at, '+8 hours'), status = 'success', count(*)
  FROM payments GROUP BY 1, 2, 3;

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

-- The report's range scan also filters on approval: with status in the index, skipping rows to a page's
-- start never reads the table.
DROP INDEX payments_by_agency_created;
CREATE INDEX payments_by_agency_created ON payments (agency_code, created_at, order_no, status);
