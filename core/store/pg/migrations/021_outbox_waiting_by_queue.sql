-- Decision 236. The outbox's waiting rows indexed by queue, oldest first: the runtimes' look takes each
-- queue's oldest due rows from that queue's own index range, and a worker's lease of the callbacks reads
-- only the callbacks, instead of every waiting row of every queue (a day's callback backlog scheduled for
-- later, a bank batch's normalise rows). It replaces the index by id alone: no extra write per row. The
-- waiting rows are few in a healthy outbox, so the build is short; it holds off writes to the outbox while
-- it runs, which wait and are not lost.
CREATE INDEX IF NOT EXISTS outbox_waiting ON outbox (queue, id) WHERE sent_at IS NULL AND failed_at IS NULL;
DROP INDEX IF EXISTS outbox_pending;
