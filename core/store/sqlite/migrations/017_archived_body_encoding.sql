-- How an archived webhook body is kept (decision 203): NULL, the bytes as received (every body archived
-- before this migration, and bodies under 64 KiB); 'gzip', the bytes as received compressed with gzip. The
-- SHA-256 stays that of the bytes as received, and the readers (the replay's export) decompress.
ALTER TABLE webhook_batches ADD COLUMN body_encoding TEXT CHECK (body_encoding IN ('gzip'));
