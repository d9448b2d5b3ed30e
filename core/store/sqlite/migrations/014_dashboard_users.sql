-- The merchant dashboard (issue 18): its users, their agencies and roles, their sessions, and the audit log
-- of what admins did. Passwords are scrypt hashes (core/passwords.ts), never the words themselves.
CREATE TABLE dashboard_users (
  id                  INTEGER PRIMARY KEY,
  -- Compared without case: people type their address as they please.
  email               TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name                TEXT NOT NULL,
  password_hash       TEXT NOT NULL,
  -- The base32 TOTP secret when the second factor is on; the last time step used, so a code is used once.
  totp_secret         TEXT,
  totp_last_step      INTEGER,
  disabled_at         TEXT,
  created_at          TEXT NOT NULL,
  password_changed_at TEXT NOT NULL
) STRICT;

CREATE TABLE dashboard_memberships (
  user_id  INTEGER NOT NULL REFERENCES dashboard_users (id),
  agency   TEXT NOT NULL REFERENCES agencies (code),
  role     TEXT NOT NULL CHECK (role IN ('viewer', 'admin')),
  PRIMARY KEY (user_id, agency)
) STRICT;

-- Server-side sessions, so logout, disabling a user and a password reset end them at once. The cookie holds
-- a random id; only its SHA-256 is stored, so a copy of the database opens no session.
CREATE TABLE dashboard_sessions (
  id_sha256     TEXT PRIMARY KEY,
  user_id       INTEGER NOT NULL REFERENCES dashboard_users (id),
  csrf          TEXT NOT NULL,
  -- 1 while the session waits for the TOTP code: it opens no page yet.
  pending_totp  INTEGER NOT NULL DEFAULT 0 CHECK (pending_totp IN (0, 1)),
  created_at    TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  revoked_at    TEXT
) STRICT;
CREATE INDEX dashboard_sessions_by_user ON dashboard_sessions (user_id) WHERE revoked_at IS NULL;

-- What dashboard users changed, per agency: the agency's own users read it on the audit page.
CREATE TABLE dashboard_audit (
  id          INTEGER PRIMARY KEY,
  at          TEXT NOT NULL,
  agency      TEXT NOT NULL REFERENCES agencies (code),
  user_id     INTEGER REFERENCES dashboard_users (id),
  user_email  TEXT NOT NULL,
  action      TEXT NOT NULL,
  target      TEXT NOT NULL,
  detail      TEXT
) STRICT;
CREATE INDEX dashboard_audit_by_agency ON dashboard_audit (agency, id);
