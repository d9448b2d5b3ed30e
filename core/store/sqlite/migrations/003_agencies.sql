-- Agency (tenant) settings. The API key is an HMAC key (spec 5.3), so it is kept as is, not hashed: the
-- server must recompute signatures with it. It is shown once, when created or rotated, and never listed.
ALTER TABLE agencies ADD COLUMN api_key TEXT;
ALTER TABLE agencies ADD COLUMN api_key_rotated_at TEXT;
ALTER TABLE agencies ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
CREATE UNIQUE INDEX agencies_by_api_key ON agencies (api_key) WHERE api_key IS NOT NULL;

-- Report tokens (JWT) minted by ops. The JWT itself is never stored; its jti is, to revoke it.
CREATE TABLE report_tokens (
  jti         TEXT PRIMARY KEY,
  agencies    TEXT NOT NULL,
  label       TEXT,
  issued_at   TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  revoked_at  TEXT
) STRICT;
