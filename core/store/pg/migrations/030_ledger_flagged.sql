-- Decision 249. The ledger entries that carry exception codes, by agency and business day in posting order:
-- the dashboard's postings filtered by code (the overview's "exceptions" link) and the code filter's
-- choices read these, not every entry of the days asked for. Flagged entries are few; the others are not
-- in this index at all.
CREATE INDEX ledger_flagged ON ledger_entries (sink, business_date, posting_id) WHERE exceptions <> '[]';
