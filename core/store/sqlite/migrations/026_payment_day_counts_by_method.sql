-- Decision 243. The payment day counts hold each payment's method too ('' before one is chosen), so the
-- dashboard's payments page filtered by method takes its total from them as it does unfiltered (decision
-- 240), instead of counting the agency's payments over the days asked for: a year of a million payments
-- held the web process's one thread for about 100 ms at each view. The report's day sums add the methods
-- up. The counts are rebuilt from the payments once, in this migration's transaction.
DROP TRIGGER payments_count_insert;
DROP TRIGGER payments_count_delete;
DROP TRIGGER payments_count_update;
DROP TABLE payment_day_counts;

CREATE TABLE payment_day_counts (
  agency_code  TEXT NOT NULL,
  day          TEXT NOT NULL,
  approved     INTEGER NOT NULL,
  method       TEXT NOT NULL,
  n            INTEGER NOT NULL CHECK (n >= 0),
  PRIMARY KEY (agency_code, day, approved, method)
) STRICT, WITHOUT ROWID;

INSERT INTO payment_day_counts (agency_code, day, approved, method, n)
  SELECT agency_code, date(created_at, '+8 hours'), status = 'success', coalesce(payment_method, ''), count(*)
  FROM payments GROUP BY 1, 2, 3, 4;

CREATE TRIGGER payments_count_insert AFTER INSERT ON payments BEGIN
  INSERT INTO payment_day_counts (agency_code, day, approved, method, n)
    VALUES (new.agency_code, date(new.created_at, '+8 hours'), new.status = 'success',
      coalesce(new.payment_method, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER payments_count_delete AFTER DELETE ON payments BEGIN
  UPDATE payment_day_counts SET n = n - 1
    WHERE agency_code = old.agency_code AND day = date(old.created_at, '+8 hours')
      AND approved = (old.status = 'success') AND method = coalesce(old.payment_method, '');
END;

CREATE TRIGGER payments_count_update AFTER UPDATE OF agency_code, created_at, status, payment_method ON payments
  WHEN old.agency_code IS NOT new.agency_code OR old.created_at IS NOT new.created_at
    OR (old.status = 'success') IS NOT (new.status = 'success')
    OR old.payment_method IS NOT new.payment_method
BEGIN
  UPDATE payment_day_counts SET n = n - 1
    WHERE agency_code = old.agency_code AND day = date(old.created_at, '+8 hours')
      AND approved = (old.status = 'success') AND method = coalesce(old.payment_method, '');
  INSERT INTO payment_day_counts (agency_code, day, approved, method, n)
    VALUES (new.agency_code, date(new.created_at, '+8 hours'), new.status = 'success',
      coalesce(new.payment_method, ''), 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
