-- How an archived webhook body is kept (decision 203), as on SQLite: NULL, the bytes as received; 'gzip',
-- those bytes compressed with gzip. The SHA-256 stays that of the bytes as received.
ALTER TABLE webhook_batches ADD COLUMN body_encoding text CHECK (body_encoding IN ('gzip'));
