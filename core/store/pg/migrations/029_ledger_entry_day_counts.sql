-- Decision 248. Each agency's ledger counted per business day, so the zakat report's pages and the
-- dashboard's postings page take their total and the day a page starts on from a few rows, as SQLite does
-- (decision 234), instead of counting every entry of the range for each page: a year of a million postings
-- took 1.4 s a page, and 2.1 to 2.9 s deep in the year, each holding a pooled connection that checkout and
-- the bank webhook share.
--
-- A page counts postings at their latest version. Kept by triggers as SQLite keeps it, two ledger jobs
-- appending two versions of one posting at once would each see no other version (neither has committed)
-- and count the posting twice. So an append counts what it can know alone:
-- - its entries, per agency and day, appended as one row each to ledger_entry_day_count_deltas (no row
--   another writer updates; a ledger append is one statement);
-- - its later versions (version > 1), each noted in ledger_unpaired_versions.
-- The pipeline's upkeep (one process at a time) pairs each noted version with an older version of its
-- posting in that ledger once one has committed, appending -1 for its day and dropping the note, then folds
-- the appended rows into ledger_entry_day_counts. A read subtracts the notes that already have their pair,
-- so every snapshot counts each posting once: a posting's versions all carry its business day (the
-- normalise job keeps the first version's), so its entries, and its -1s, fall on one day.
--
-- The ledger is appended to only: deleting an entry, or changing its key or day, is refused (as for the
-- postings and batches, decision 217), so nothing here has to follow a removed entry.
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
CREATE TABLE ledger_unpaired_versions (
  sink           text NOT NULL,
  posting_id     bigint NOT NULL,
  version        integer NOT NULL,
  business_date  text NOT NULL,
  PRIMARY KEY (sink, posting_id, version)
);
CREATE INDEX ledger_unpaired_versions_by_day ON ledger_unpaired_versions (sink, business_date);

-- The ledger an installation holds, counted once (appends wait for the migration's commit): its postings
-- per day, and the later versions that have no older one in their ledger yet.
LOCK TABLE ledger_entries IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO ledger_entry_day_counts (sink, business_date, n)
  SELECT l.sink, l.business_date, count(*) FROM ledger_entries l
  WHERE NOT EXISTS (SELECT 1 FROM ledger_entries o
                    WHERE o.sink = l.sink AND o.posting_id = l.posting_id AND o.version < l.version)
  GROUP BY 1, 2;
INSERT INTO ledger_unpaired_versions (sink, posting_id, version, business_date)
  SELECT l.sink, l.posting_id, l.version, l.business_date FROM ledger_entries l
  WHERE l.version > 1 AND NOT EXISTS (SELECT 1 FROM ledger_entries o
                    WHERE o.sink = l.sink AND o.posting_id = l.posting_id AND o.version < l.version);

CREATE FUNCTION ledger_entries_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_entry_day_count_deltas (sink, business_date, n)
    SELECT sink, business_date, count(*) FROM added GROUP BY 1, 2;
  INSERT INTO ledger_unpaired_versions (sink, posting_id, version, business_date)
    SELECT sink, posting_id, version, business_date FROM added WHERE version > 1;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_entries_counted AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_count_added();

CREATE TRIGGER ledger_entries_kept BEFORE DELETE OR TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION amil_refuse_loss();
CREATE TRIGGER ledger_entries_keyed BEFORE UPDATE OF sink, posting_id, version, business_date ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION amil_refuse_loss();
