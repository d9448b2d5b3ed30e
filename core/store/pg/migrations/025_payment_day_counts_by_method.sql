-- Decision 243. The payment day counts hold each payment's method too ('' before one is chosen), so the
-- dashboard's payments page filtered by method takes its total from them as it does unfiltered (decision
-- 240), instead of counting the agency's payments over the days asked for. The report's day sums add the
-- methods up. The counts are rebuilt from the payments in this migration's transaction, with the payments'
-- writes held off meanwhile (settlements and new orders wait, or are answered 503 and retried; none is
-- lost): a read of the whole payments table, so on a large one run the upgrade in a quiet hour.
LOCK TABLE payments IN SHARE ROW EXCLUSIVE MODE;

ALTER TABLE payment_day_counts ADD COLUMN method text NOT NULL DEFAULT '';
ALTER TABLE payment_day_counts DROP CONSTRAINT payment_day_counts_pkey;
DELETE FROM payment_day_counts;
INSERT INTO payment_day_counts (agency_code, day, approved, method, n)
  SELECT agency_code, amil_kl_day(created_at), (status = 'success')::integer, coalesce(payment_method, ''),
    count(*)
  FROM payments GROUP BY 1, 2, 3, 4;
ALTER TABLE payment_day_counts ADD PRIMARY KEY (agency_code, day, approved, method);
ALTER TABLE payment_day_counts ALTER COLUMN method DROP DEFAULT;

CREATE OR REPLACE FUNCTION payments_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE payment_day_counts SET n = n - 1
      WHERE agency_code = OLD.agency_code AND day = amil_kl_day(OLD.created_at)
        AND approved = (OLD.status = 'success')::integer AND method = coalesce(OLD.payment_method, '');
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO payment_day_counts (agency_code, day, approved, method, n)
      VALUES (NEW.agency_code, amil_kl_day(NEW.created_at), (NEW.status = 'success')::integer,
        coalesce(NEW.payment_method, ''), 1)
      ON CONFLICT (agency_code, day, approved, method) DO UPDATE SET n = payment_day_counts.n + 1;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER payments_count_update ON payments;
CREATE TRIGGER payments_count_update AFTER UPDATE OF agency_code, created_at, status, payment_method ON payments
  FOR EACH ROW
  WHEN (OLD.agency_code IS DISTINCT FROM NEW.agency_code OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR (OLD.status = 'success') IS DISTINCT FROM (NEW.status = 'success')
    OR OLD.payment_method IS DISTINCT FROM NEW.payment_method)
  EXECUTE FUNCTION payments_count();
