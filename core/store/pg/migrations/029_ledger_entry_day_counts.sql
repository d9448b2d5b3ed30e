-- Decision 248. Each agency's ledger counted per business day, so the zakat report's pages and the
-- dashboard's postings page take their total and the day a page starts on from a few rows, as SQLite does
-- (decision 234), instead of counting every entry of the range for each page: a year of a million postings
-- took 1.4 s a page, and 2.9 s for its last page, each holding a pooled connection that checkout and the
-- bank webhook share.
--
-- What is counted is entries, every version: a statement's new entries append one row per agency and day
-- (a ledger append is one statement of a batch's entries), so concurrent appends never wait on a count row
-- and never need to see each other's uncommitted versions of a posting. A page wants postings, counted at
-- their latest version; the entries that are a later version of a posting already in that ledger are
-- subtracted when a page is placed, found through the partial index below (corrections: few). A posting's
-- versions all carry its business day (the normalise job keeps the first version's), so its entries fall
-- on one day and the difference is that day's postings. The pipeline's upkeep folds the appended rows into
-- ledger_entry_day_counts now and again, as it does the payments' (decision 246). The ledger is appended
-- to, never updated; an entry deleted (by hand) appends its -1.
CREATE TABLE ledger_entry_day_counts (
  sink           text NOT NULL,
  business_date  text NOT NULL,
  n              bigint NOT NULL,
  PRIMARY KEY (sink, business_date)
);
CREATE TABLE ledger_entry_day_count_deltas (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sink           text NOT NULL,
  business_date  text NOT NULL,
  n              bigint NOT NULL
);
CREATE INDEX ledger_entry_day_count_deltas_by_day ON ledger_entry_day_count_deltas (sink, business_date);

-- The entries an installation holds, counted once; appends wait for the migration's commit.
LOCK TABLE ledger_entries IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO ledger_entry_day_counts (sink, business_date, n)
  SELECT sink, business_date, count(*) FROM ledger_entries GROUP BY 1, 2;

CREATE INDEX ledger_later_versions ON ledger_entries (sink, business_date) WHERE version > 1;

CREATE FUNCTION ledger_entries_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_entry_day_count_deltas (sink, business_date, n)
    SELECT sink, business_date, count(*) FROM added GROUP BY 1, 2;
  RETURN NULL;
END $$;
CREATE FUNCTION ledger_entries_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_entry_day_count_deltas (sink, business_date, n)
    SELECT sink, business_date, -count(*) FROM removed GROUP BY 1, 2;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_entries_counted_insert AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_count_added();
CREATE TRIGGER ledger_entries_counted_delete AFTER DELETE ON ledger_entries
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_count_removed();
