-- Decision 229. The zakat report reads each agency's ledger by business day in posting order, as the
-- dashboard and the nightly workbook do. The day index now carries the posting and its version, so a page
-- or a chunk of the stream walks one day's entries in order: no sort, and no scan of the agency's history.
-- It replaces the day index rather than adding one: the pipeline's appends keep one index write each.
-- The build holds off the pipeline's ledger appends (never the webhook) while it runs; they wait or retry
-- and none is lost. A large ledger can have it built beforehand, without that pause, by
-- CREATE INDEX CONCURRENTLY with the same name and columns (docs/deployment.md): then this only drops the old.
CREATE INDEX IF NOT EXISTS ledger_by_day_in_posting_order
  ON ledger_entries (sink, business_date, posting_id, version);
DROP INDEX IF EXISTS ledger_by_day;
