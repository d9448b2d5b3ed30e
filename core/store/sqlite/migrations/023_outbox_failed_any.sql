-- Decision 238. Every failed outbox row indexed by queue, sent or not (a job handed to Redis can fail for
-- good too): the queue counts of `amil queues` and the list of failed jobs read the
-- failed rows alone instead of every row the outbox ever ran. It replaces the index of the failed rows not
-- handed over, which the same reads still use: failed rows are few, so it costs the hot path nothing.
CREATE INDEX outbox_failed_any ON outbox (queue) WHERE failed_at IS NOT NULL;
DROP INDEX outbox_failed;
