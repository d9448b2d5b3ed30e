-- The bank's data.email (spec 2.5) reaches the agency in the zakat report as data_email. It was validated
-- and compared with the transaction e-mail (EMAIL_MISMATCH) but never kept in the normalised row.
ALTER TABLE normalised_postings ADD COLUMN data_email TEXT;

-- Backfill from the raw record each version was normalised from: the history holds every version of a
-- posting that changed, the posting row the current one. Normalised as the normaliser does (trimmed,
-- lower-case, absent when empty); the schema's e-mail format is ASCII, so SQLite's lower() and trim() agree
-- with JavaScript's on every value that was accepted.
UPDATE normalised_postings SET data_email = (
  SELECT nullif(lower(trim(json_extract(raw.record, '$.data.email'))), '')
  FROM (
    SELECT v.record FROM bank_posting_versions v
      WHERE v.posting_id = normalised_postings.posting_id AND v.version = normalised_postings.version
    UNION ALL
    SELECT p.record FROM bank_postings p
      WHERE p.id = normalised_postings.posting_id AND p.version = normalised_postings.version
    LIMIT 1
  ) AS raw
);
