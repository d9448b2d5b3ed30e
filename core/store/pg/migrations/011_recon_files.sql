-- The workbooks themselves, on PostgreSQL only (issue 17). On several machines the worker that builds a night's
-- workbook is not the web process that serves its download, nor the worker that e-mails it: each reads it
-- from here, in 1 MiB pieces, into its own DATA_DIR (checked against the run's SHA-256). SQLite's workbooks
-- stay files in its DATA_DIR: one machine holds both. Numbered 011: 005 to 009 are left to sibling changes.
CREATE TABLE recon_files (
  run_id  bigint NOT NULL REFERENCES recon_runs (id),
  seq     integer NOT NULL,
  bytes   bytea NOT NULL,
  PRIMARY KEY (run_id, seq)
);
