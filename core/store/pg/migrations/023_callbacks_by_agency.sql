-- Decision 239. A callback carries its order's agency, and callbacks_by_agency lists an agency's callbacks
-- newest first as an index range: the dashboard's callbacks page reads the rows it shows instead of sorting
-- every callback of the agency. The backfill rewrites every callback row once and the index build reads
-- them all, holding off new callbacks meanwhile (settlements wait, or are answered 503 and retried; none is
-- lost). On a large table, add the column, backfill it in slices and build the index CONCURRENTLY first
-- (docs/deployment.md): this then only fills what is left.
ALTER TABLE callbacks ADD COLUMN IF NOT EXISTS agency_code text;
UPDATE callbacks c SET agency_code = p.agency_code FROM payments p
  WHERE p.order_no = c.order_no AND c.agency_code IS NULL;
CREATE INDEX IF NOT EXISTS callbacks_by_agency ON callbacks (agency_code, id);

-- During a rolling upgrade the release before this one still queues callbacks without the agency: a
-- callback inserted without it takes its order's (new releases set it themselves, so this never runs then).
CREATE OR REPLACE FUNCTION amil_callback_agency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.agency_code := (SELECT p.agency_code FROM payments p WHERE p.order_no = NEW.order_no);
  RETURN NEW;
END
$$;
DROP TRIGGER IF EXISTS callbacks_agency ON callbacks;
CREATE TRIGGER callbacks_agency BEFORE INSERT ON callbacks
  FOR EACH ROW WHEN (NEW.agency_code IS NULL) EXECUTE FUNCTION amil_callback_agency();
