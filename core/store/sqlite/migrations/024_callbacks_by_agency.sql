-- Decision 239. The dashboard's callbacks page reads what it shows. A callback carries its order's agency,
-- and callbacks_by_agency lists an agency's callbacks newest first as an index range; callback_counts keeps
-- each agency's callbacks counted by state and by whether an attempt was made (failing ones are those
-- attempted and still queued, and the dead and gone), kept by triggers in the writing transaction. Before,
-- each page view counted and sorted every callback of the agency on the web process's one thread: 1.1 to
-- 1.5 s with a million. The backfill reads every callback once, at the first start after the upgrade.
ALTER TABLE callbacks ADD COLUMN agency_code TEXT;
UPDATE callbacks SET agency_code = (SELECT p.agency_code FROM payments p WHERE p.order_no = callbacks.order_no);
CREATE INDEX callbacks_by_agency ON callbacks (agency_code, id);

CREATE TABLE callback_counts (
  agency_code  TEXT NOT NULL,
  state        TEXT NOT NULL,
  attempted    INTEGER NOT NULL CHECK (attempted IN (0, 1)),
  n            INTEGER NOT NULL CHECK (n >= 0),
  PRIMARY KEY (agency_code, state, attempted)
) STRICT, WITHOUT ROWID;

INSERT INTO callback_counts (agency_code, state, attempted, n)
  SELECT agency_code, state, attempts > 0, count(*) FROM callbacks GROUP BY 1, 2, 3;

-- During a rolling upgrade the release before this one still queues callbacks without the agency: a
-- callback inserted without it takes its order's (new releases set it themselves, so this never runs then).
CREATE TRIGGER callback_agency AFTER INSERT ON callbacks WHEN new.agency_code IS NULL
BEGIN
  UPDATE callbacks SET agency_code = (SELECT p.agency_code FROM payments p WHERE p.order_no = new.order_no)
    WHERE id = new.id;
END;

CREATE TRIGGER callback_counted AFTER INSERT ON callbacks
BEGIN
  INSERT INTO callback_counts (agency_code, state, attempted, n)
    VALUES (coalesce(new.agency_code, (SELECT p.agency_code FROM payments p WHERE p.order_no = new.order_no)),
            new.state, new.attempts > 0, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

-- A lease changes neither; a finish changes the attempts and often the state.
CREATE TRIGGER callback_recounted AFTER UPDATE OF state, attempts ON callbacks
  WHEN old.state IS NOT new.state OR (old.attempts > 0) IS NOT (new.attempts > 0)
BEGIN
  UPDATE callback_counts SET n = n - 1
    WHERE agency_code = old.agency_code AND state = old.state AND attempted = (old.attempts > 0);
  INSERT INTO callback_counts (agency_code, state, attempted, n)
    VALUES (new.agency_code, new.state, new.attempts > 0, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER callback_uncounted AFTER DELETE ON callbacks
BEGIN
  UPDATE callback_counts SET n = n - 1
    WHERE agency_code = old.agency_code AND state = old.state AND attempted = (old.attempts > 0);
END;
