-- Decision 245. An agency's settled callbacks (delivered, superseded, dead, gone) counted by state and by
-- whether an attempt was made, for the dashboard's callbacks tabs and overview, without counting the
-- agency's history at each view (100 ms a view for a million callbacks) and without a count row that every
-- delivery of every worker would lock. A callback that settles appends a row of its own (+1 to its state;
-- -1 to the state it leaves, when an operator moves a settled one); nothing updates a row another writer
-- holds, and a lease or a retry (a callback still queued) appends nothing. A count is the sum of the
-- agency's rows; the queued callbacks, few (what is being delivered or retried), are counted live. The
-- pipeline's upkeep folds the rows into one per agency, state and attempted now and again (core/store/pg/
-- callbacks.ts). The table starts from the callbacks stored, with their writes held off meanwhile (a
-- delivery or a new callback waits, or is answered 503 and retried; none is lost).
LOCK TABLE callbacks IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE callback_count_deltas (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agency_code  text NOT NULL,
  state        text NOT NULL,
  attempted    boolean NOT NULL,
  n            bigint NOT NULL
);
CREATE INDEX callback_count_deltas_by_agency ON callback_count_deltas (agency_code);

INSERT INTO callback_count_deltas (agency_code, state, attempted, n)
  SELECT agency_code, state, attempts > 0, count(*) FROM callbacks
  WHERE agency_code IS NOT NULL AND state <> 'queued' GROUP BY 1, 2, 3;

CREATE FUNCTION callbacks_count_settled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state <> 'queued' AND OLD.agency_code IS NOT NULL THEN
    INSERT INTO callback_count_deltas (agency_code, state, attempted, n)
      VALUES (OLD.agency_code, OLD.state, OLD.attempts > 0, -1);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.state <> 'queued' AND NEW.agency_code IS NOT NULL THEN
    INSERT INTO callback_count_deltas (agency_code, state, attempted, n)
      VALUES (NEW.agency_code, NEW.state, NEW.attempts > 0, 1);
  END IF;
  RETURN NULL;
END $$;

-- Only a row that is or was settled, and whose counted key changed: a lease (lease_until only) queues no
-- trigger at all, a retry (still queued) is filtered out by the WHEN.
CREATE TRIGGER callbacks_settled_insert AFTER INSERT ON callbacks
  FOR EACH ROW WHEN (NEW.state <> 'queued') EXECUTE FUNCTION callbacks_count_settled();
CREATE TRIGGER callbacks_settled_update AFTER UPDATE OF state, attempts, agency_code ON callbacks
  FOR EACH ROW WHEN ((OLD.state <> 'queued' OR NEW.state <> 'queued')
    AND (OLD.state, OLD.attempts > 0, OLD.agency_code) IS DISTINCT FROM (NEW.state, NEW.attempts > 0, NEW.agency_code))
  EXECUTE FUNCTION callbacks_count_settled();
CREATE TRIGGER callbacks_settled_delete AFTER DELETE ON callbacks
  FOR EACH ROW WHEN (OLD.state <> 'queued') EXECUTE FUNCTION callbacks_count_settled();
