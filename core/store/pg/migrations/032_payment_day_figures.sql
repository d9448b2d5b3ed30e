-- Decision 251. The payment day counts also hold the sen of the payments they count, how many of them were
-- refused (failed), and how many the bank is working on (pending with an acquirer reference): the
-- dashboard overview's checkout figures per day, which it read from every payment of its 30 days for each
-- view instead (385 ms at 30,000 payments a day, a pooled connection held as long). A payment's change of
-- any of these appends its row's -1 and +1 as a change of its day, approval or method did (decision 246).
--
-- The counts are rebuilt from the payments in this migration's transaction, with the payments' writes held
-- off meanwhile (as migration 025: a read of the whole payments table, so on a large one run the upgrade in
-- a quiet hour). The new columns have no default: a fold of the release before, which does not know them,
-- fails (and deletes nothing) until its process is upgraded, rather than dropping figures.
LOCK TABLE payments IN SHARE ROW EXCLUSIVE MODE;

ALTER TABLE payment_day_counts ADD COLUMN sum_sen bigint NOT NULL DEFAULT 0,
  ADD COLUMN failed_n integer NOT NULL DEFAULT 0, ADD COLUMN started_n integer NOT NULL DEFAULT 0;
ALTER TABLE payment_day_count_deltas ADD COLUMN sum_sen bigint NOT NULL DEFAULT 0,
  ADD COLUMN failed_n integer NOT NULL DEFAULT 0, ADD COLUMN started_n integer NOT NULL DEFAULT 0;
ALTER TABLE payment_day_counts ALTER COLUMN sum_sen DROP DEFAULT, ALTER COLUMN failed_n DROP DEFAULT,
  ALTER COLUMN started_n DROP DEFAULT;
ALTER TABLE payment_day_count_deltas ALTER COLUMN sum_sen DROP DEFAULT, ALTER COLUMN failed_n DROP DEFAULT,
  ALTER COLUMN started_n DROP DEFAULT;

DELETE FROM payment_day_count_deltas;
DELETE FROM payment_day_counts;
INSERT INTO payment_day_counts (agency_code, day, approved, method, n, sum_sen, failed_n, started_n)
  SELECT agency_code, amil_kl_day(created_at), (status = 'success')::integer, coalesce(payment_method, ''),
    count(*), sum(amount_sen), count(*) FILTER (WHERE status = 'failed'),
    count(*) FILTER (WHERE status = 'pending' AND acquirer_ref IS NOT NULL)
  FROM payments GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE FUNCTION payments_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO payment_day_count_deltas (agency_code, day, approved, method, n, sum_sen, failed_n, started_n)
      VALUES (OLD.agency_code, amil_kl_day(OLD.created_at), (OLD.status = 'success')::integer,
        coalesce(OLD.payment_method, ''), -1, -OLD.amount_sen, -(OLD.status = 'failed')::integer,
        -(OLD.status = 'pending' AND OLD.acquirer_ref IS NOT NULL)::integer);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO payment_day_count_deltas (agency_code, day, approved, method, n, sum_sen, failed_n, started_n)
      VALUES (NEW.agency_code, amil_kl_day(NEW.created_at), (NEW.status = 'success')::integer,
        coalesce(NEW.payment_method, ''), 1, NEW.amount_sen, (NEW.status = 'failed')::integer,
        (NEW.status = 'pending' AND NEW.acquirer_ref IS NOT NULL)::integer);
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER payments_count_update ON payments;
CREATE TRIGGER payments_count_update
  AFTER UPDATE OF agency_code, created_at, status, payment_method, amount_sen, acquirer_ref ON payments
  FOR EACH ROW
  WHEN (OLD.agency_code IS DISTINCT FROM NEW.agency_code OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR OLD.status IS DISTINCT FROM NEW.status OR OLD.payment_method IS DISTINCT FROM NEW.payment_method
    OR OLD.amount_sen IS DISTINCT FROM NEW.amount_sen
    OR (OLD.acquirer_ref IS NULL) IS DISTINCT FROM (NEW.acquirer_ref IS NULL))
  EXECUTE FUNCTION payments_count();
