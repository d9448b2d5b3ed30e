-- Decision 242. The failing part of the dashboard's callbacks page (attempted and still queued, dead, gone)
-- is an agency's own index range, newest first. It was read through callbacks_by_state: every agency's
-- failing callbacks, sorted, at each view of any agency's page. Dead callbacks are never pruned, so one
-- merchant's endpoint down for a month made every agency's page slower. A callback enters this index only
-- when it fails: a delivery at the first attempt never touches it. The build reads the table once and holds
-- off new callbacks meanwhile; on a large table build it CONCURRENTLY first (docs/deployment.md).
CREATE INDEX IF NOT EXISTS callbacks_failing ON callbacks (agency_code, id)
  WHERE state IN ('dead', 'gone') OR (state = 'queued' AND attempts > 0);
