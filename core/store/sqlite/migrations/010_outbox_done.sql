-- An outbox row handed to Redis is "sent", but the work is done only when its job has completed: a Redis
-- lost (failed over, flushed, restarted without its data) after the hand-over must not lose the job. The
-- workers' reconciler looks for rows sent and not done, and re-adds the jobs Redis no longer holds.
ALTER TABLE outbox ADD COLUMN done_at TEXT;

-- Rows handed over before this migration were sent under the old contract; their jobs ran long ago.
UPDATE outbox SET done_at = sent_at WHERE sent_at IS NOT NULL;

-- The reconciler's look: rows sent and not done, oldest hand-over first.
CREATE INDEX outbox_unfinished ON outbox (sent_at) WHERE sent_at IS NOT NULL AND done_at IS NULL AND failed_at IS NULL;
-- Embedded mode: failed rows due for a re-drive (past their retry horizon, not permanent).
CREATE INDEX outbox_redrive ON outbox (next_try_at) WHERE failed_at IS NOT NULL AND next_try_at IS NOT NULL;
