-- Decision 234. Each agency's ledger counted per business day, as payment_day_counts counts payments: the
-- zakat report takes its total and the day a page starts on from these rows, so a page over a range of
-- years costs what a page over one day does, instead of counting every entry of the range on the web
-- process's one thread. A row counts the postings whose latest version in that agency's ledger falls on
-- that day: the report's own rule (zakat-report.ts, LATEST_VERSION).
CREATE TABLE ledger_day_counts (
  sink           TEXT NOT NULL,
  business_date  TEXT NOT NULL,
  n              INTEGER NOT NULL CHECK (n >= 0),
  PRIMARY KEY (sink, business_date)
) STRICT, WITHOUT ROWID;

INSERT INTO ledger_day_counts (sink, business_date, n)
  SELECT l.sink, l.business_date, count(*) FROM ledger_entries l
  WHERE NOT EXISTS (SELECT 1 FROM ledger_entries l2
                    WHERE l2.sink = l.sink AND l2.posting_id = l.posting_id AND l2.version > l.version)
  GROUP BY l.sink, l.business_date;

-- Kept in the append's own transaction, whatever inserts the entry. The ledger is append-only: an entry
-- is never updated or deleted. A version older than one already there changes nothing; a newer one moves
-- its posting from its previous latest version's day (the same day, as the pipeline writes it) to its own.
CREATE TRIGGER ledger_day_count AFTER INSERT ON ledger_entries
  WHEN NOT EXISTS (SELECT 1 FROM ledger_entries l2
                   WHERE l2.sink = new.sink AND l2.posting_id = new.posting_id AND l2.version > new.version)
BEGIN
  UPDATE ledger_day_counts SET n = n - 1
    WHERE new.version > 1 AND sink = new.sink AND business_date = (
      SELECT l2.business_date FROM ledger_entries l2
      WHERE l2.sink = new.sink AND l2.posting_id = new.posting_id AND l2.version < new.version
      ORDER BY l2.version DESC LIMIT 1);
  INSERT INTO ledger_day_counts (sink, business_date, n) VALUES (new.sink, new.business_date, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
END;
