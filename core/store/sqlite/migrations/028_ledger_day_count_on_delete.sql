-- Decision 248. The ledger is appended to, never updated, and the pipeline deletes nothing from it; an entry
-- deleted by hand (an operator's SQL) now leaves the day counts true, as on PostgreSQL: when it was its
-- posting's latest version, its day loses the posting, and the version before it, if any, counts again.
CREATE TRIGGER ledger_day_count_delete AFTER DELETE ON ledger_entries
  WHEN NOT EXISTS (SELECT 1 FROM ledger_entries l2
                   WHERE l2.sink = old.sink AND l2.posting_id = old.posting_id AND l2.version > old.version)
BEGIN
  UPDATE ledger_day_counts SET n = n - 1 WHERE sink = old.sink AND business_date = old.business_date;
  INSERT INTO ledger_day_counts (sink, business_date, n)
    SELECT l2.sink, l2.business_date, 1 FROM ledger_entries l2
    WHERE l2.sink = old.sink AND l2.posting_id = old.posting_id
    ORDER BY l2.version DESC LIMIT 1
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
