-- Readiness and metrics (issue 13).

-- The readiness probe proves the store can commit: it updates this one row in a transaction. A read
-- answers from a full disk or a read-only file too; only a committed write shows the webhook would work.
CREATE TABLE health_heartbeat (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  beat   INTEGER NOT NULL,
  at     TEXT NOT NULL
) STRICT;
INSERT INTO health_heartbeat (id, beat, at) VALUES (1, 0, '');

-- Scraped every few seconds: callbacks by state and attempt, and the batches of the last days.
CREATE INDEX callbacks_by_state ON callbacks (state, attempts);
CREATE INDEX webhook_batches_by_received ON webhook_batches (received_at);
CREATE INDEX recon_runs_by_trigger ON recon_runs (trigger, sink, finished_at);
CREATE INDEX outbox_failed ON outbox (queue) WHERE failed_at IS NOT NULL AND sent_at IS NULL;
