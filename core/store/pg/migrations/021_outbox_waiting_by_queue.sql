-- Decision 236. The outbox's waiting rows indexed by queue, oldest first: the runtimes' look takes each
-- queue's oldest due rows from that queue's own index range, and a worker's lease of the callbacks reads
-- only the callbacks, instead of every waiting row of every queue (a day's callback backlog scheduled for
-- later, a bank batch's normalise rows). It replaces the index by id alone: no extra write per row. The
-- build reads the whole outbox (it keeps every row it ran) and holds off writes to it meanwhile: they wait,
-- or are answered 503 and retried, and none is lost. On a large outbox, build it first with CREATE INDEX
-- CONCURRENTLY and the same name and columns (docs/deployment.md): then this only drops the old index.
CREATE INDEX IF NOT EXISTS outbox_waiting ON outbox (queue, id) WHERE sent_at IS NULL AND failed_at IS NULL;
DROP INDEX IF EXISTS outbox_pending;
