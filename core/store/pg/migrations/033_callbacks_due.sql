-- Decision 264. A callback's own row is its queue: workers lease the due ones straight from callbacks
-- (next_attempt_at, oldest first) instead of an outbox row per attempt, so a delivery writes its callback
-- twice (lease, finish) and one attempt, and no outbox row at all. callbacks_due is that line: only the
-- queued callbacks, by when they are due.
CREATE INDEX IF NOT EXISTS callbacks_due ON callbacks (next_attempt_at, id) WHERE state = 'queued';

-- A queued callback is due at its next_attempt_at (every release has set it; this covers any that did not).
-- The callbacks' outbox rows are left as they are: during a rolling upgrade the release before still leases
-- them (both releases take the lease on the callback's own row, so neither delivers a callback the other
-- is delivering), and the new release's lease loop retires them once a minute (decision 264).
UPDATE callbacks SET next_attempt_at = created_at WHERE state = 'queued' AND next_attempt_at IS NULL;
