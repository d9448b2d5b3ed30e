-- Decision 217. The pipeline's own rows (normalised versions, ledger entries) drop their foreign keys to
-- bank_postings and webhook_batches. On PostgreSQL each such key made every inserted row lock its posting
-- (SELECT ... FOR KEY SHARE), which dirties the posting's page and writes WAL: about a third of the
-- pipeline's database time. Those rows are only ever made from stored postings and batches, in the same
-- database, so the keys only guarded against the parents going away; the parents are now kept instead:
-- a posting or a batch can be neither deleted nor re-keyed, by amil or by anyone with SQL.
ALTER TABLE normalised_postings
  DROP CONSTRAINT normalised_postings_posting_id_fkey,
  DROP CONSTRAINT normalised_postings_batch_id_fkey;
ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_posting_id_fkey;

CREATE FUNCTION amil_refuse_loss() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% rows are never deleted or re-keyed (amil decision 217)', TG_TABLE_NAME
    USING ERRCODE = 'restrict_violation';
END
$$;

-- Statement triggers: a DELETE or TRUNCATE is refused whatever it matches; an UPDATE naming id, per row.
CREATE TRIGGER bank_postings_kept BEFORE DELETE OR TRUNCATE ON bank_postings
  FOR EACH STATEMENT EXECUTE FUNCTION amil_refuse_loss();
CREATE TRIGGER bank_postings_keyed BEFORE UPDATE OF id ON bank_postings
  FOR EACH ROW EXECUTE FUNCTION amil_refuse_loss();
CREATE TRIGGER webhook_batches_kept BEFORE DELETE OR TRUNCATE ON webhook_batches
  FOR EACH STATEMENT EXECUTE FUNCTION amil_refuse_loss();
CREATE TRIGGER webhook_batches_keyed BEFORE UPDATE OF id ON webhook_batches
  FOR EACH ROW EXECUTE FUNCTION amil_refuse_loss();
