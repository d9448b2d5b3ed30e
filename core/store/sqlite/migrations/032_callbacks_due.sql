-- Decision 264. A callback's own row is its queue: the pipeline leases the due ones straight from callbacks
-- (next_attempt_at, oldest first) instead of an outbox row per attempt, so a delivery writes its callback
-- twice (lease, finish) and one attempt, and no outbox row at all. callbacks_due is that line: only the
-- queued callbacks, by when they are due.
CREATE INDEX callbacks_due ON callbacks (next_attempt_at, id) WHERE state = 'queued';

-- The callbacks' outbox rows not sent (first attempts, retries and deferrals waiting, or failed) are done:
-- each queued callback's own row says when it is due (a retry's next_attempt_at is its row's time). One
-- whose row had failed is leased again (past its retry horizon, one more attempt, then dead).
UPDATE callbacks SET next_attempt_at = created_at WHERE state = 'queued' AND next_attempt_at IS NULL;
UPDATE outbox SET sent_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), done_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
  last_error = NULL, failed_at = NULL
  WHERE queue = 'callbacks' AND sent_at IS NULL;
