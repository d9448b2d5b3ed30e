import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import type { ReportTokenRow } from '../report-tokens.ts';
import type {
  AuditEntry,
  DashboardCredentials,
  DashboardMembership,
  DashboardRole,
  DashboardSession,
  DashboardUser,
  DashboardUsersRepository,
} from '../dashboard-users.ts';

interface UserRaw {
  id: number;
  email: string;
  name: string;
  disabledAt: string | null;
  totpSecret: string | null;
  createdAt: string;
  passwordHash: string;
}

const USER_COLUMNS = `id, email, name, disabled_at AS disabledAt, totp_secret AS totpSecret,
  created_at AS createdAt, password_hash AS passwordHash`;

/** The SQLite implementation. */
export function sqliteDashboardUsers(db: Db): DashboardUsersRepository {
  // Every write through the connection's group commit: another process's write lock is waited for off this
  // thread (a dashboard request never stops the server).
  const write = groupCommitter(db);
  const membershipsOf = db.prepare<[number], DashboardMembership>(
    `SELECT m.agency, a.name AS agencyName, m.role FROM dashboard_memberships m
     JOIN agencies a ON a.code = m.agency WHERE m.user_id = ? ORDER BY m.agency`,
  );
  const credentials = (raw: UserRaw | undefined): DashboardCredentials | undefined =>
    raw && {
      id: raw.id,
      email: raw.email,
      name: raw.name,
      disabledAt: raw.disabledAt,
      totp: raw.totpSecret !== null,
      createdAt: raw.createdAt,
      memberships: membershipsOf.all(raw.id),
      passwordHash: raw.passwordHash,
      totpSecret: raw.totpSecret,
    };
  const publicUser = (raw: UserRaw | undefined): DashboardUser | undefined => {
    const full = credentials(raw);
    if (!full) return undefined;
    const { passwordHash: _hash, totpSecret: _secret, ...user } = full;
    return user;
  };
  const setMembership = (userId: number, agency: string, role: DashboardRole | null): void => {
    if (role === null) {
      db.prepare('DELETE FROM dashboard_memberships WHERE user_id = ? AND agency = ?').run(userId, agency);
      return;
    }
    db.prepare(
      `INSERT INTO dashboard_memberships (user_id, agency, role) VALUES (?, ?, ?)
       ON CONFLICT (user_id, agency) DO UPDATE SET role = excluded.role`,
    ).run(userId, agency, role);
  };
  const revokeAll = (userId: number, now: Date): void => {
    db.prepare('UPDATE dashboard_sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL').run(
      now.toISOString(),
      userId,
    );
  };
  const userById = (id: number) =>
    db.prepare<[number], UserRaw>(`SELECT ${USER_COLUMNS} FROM dashboard_users WHERE id = ?`).get(id);

  return {
    async create(input) {
      return write(() => {
        const row = db
          .prepare<[string, string, string, string, string], { id: number }>(
            `INSERT INTO dashboard_users (email, name, password_hash, created_at, password_changed_at)
             VALUES (?, ?, ?, ?, ?) ON CONFLICT (email) DO NOTHING RETURNING id`,
          )
          .get(input.email, input.name, input.passwordHash, input.now.toISOString(), input.now.toISOString());
        if (!row) return undefined;
        for (const m of input.memberships) setMembership(row.id, m.agency, m.role);
        return publicUser(userById(row.id));
      });
    },

    async get(id) {
      return publicUser(userById(id));
    },

    async byEmail(email) {
      return credentials(
        db
          .prepare<[string], UserRaw>(`SELECT ${USER_COLUMNS} FROM dashboard_users WHERE email = ?`)
          .get(email),
      );
    },

    async list() {
      return db
        .prepare<[], UserRaw>(`SELECT ${USER_COLUMNS} FROM dashboard_users ORDER BY email`)
        .all()
        .flatMap((raw) => publicUser(raw) ?? []);
    },

    async update(id, change) {
      return write(() => {
        if (!userById(id)) return false;
        if (change.name !== undefined)
          db.prepare('UPDATE dashboard_users SET name = ? WHERE id = ?').run(change.name, id);
        for (const m of change.memberships ?? []) setMembership(id, m.agency, m.role);
        return true;
      });
    },

    async setPassword(id, passwordHash, now) {
      return write(() => {
        const changed =
          db
            .prepare('UPDATE dashboard_users SET password_hash = ?, password_changed_at = ? WHERE id = ?')
            .run(passwordHash, now.toISOString(), id).changes === 1;
        if (changed) revokeAll(id, now);
        return changed;
      });
    },

    async setDisabled(id, disabled, now) {
      return write(() => {
        const changed =
          db
            .prepare('UPDATE dashboard_users SET disabled_at = ? WHERE id = ?')
            .run(disabled ? now.toISOString() : null, id).changes === 1;
        if (changed && disabled) revokeAll(id, now);
        return changed;
      });
    },

    async setTotp(id, secret) {
      return write(
        () =>
          db
            .prepare('UPDATE dashboard_users SET totp_secret = ?, totp_last_step = NULL WHERE id = ?')
            .run(secret, id).changes === 1,
      );
    },

    async useTotpStep(id, step) {
      return write(
        () =>
          db
            .prepare(
              `UPDATE dashboard_users SET totp_last_step = ?
             WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)`,
            )
            .run(step, id, step).changes === 1,
      );
    },

    async createSession(s, grant) {
      // Sessions over for a day are of no use even to an investigation (the audit log is): pruned here,
      // at sign-in, so the table stays the size of the live sessions.
      return write(() => {
        const dayAgo = new Date(Date.parse(s.createdAt) - 86_400_000).toISOString();
        db.prepare('DELETE FROM dashboard_sessions WHERE expires_at < ?').run(dayAgo);
        // Checked inside the write: a reset or a disable by another process either committed before (and is
        // seen here) or waits for this one (and ends the session it stores).
        const user = db
          .prepare<[number], { passwordHash: string; disabledAt: string | null }>(
            'SELECT password_hash AS passwordHash, disabled_at AS disabledAt FROM dashboard_users WHERE id = ?',
          )
          .get(s.userId);
        if (!user || user.disabledAt !== null) return false;
        const holds =
          'passwordHash' in grant
            ? user.passwordHash === grant.passwordHash
            : db
                .prepare(
                  `UPDATE dashboard_sessions SET revoked_at = ?
                   WHERE id_sha256 = ? AND user_id = ? AND pending_totp = 1 AND revoked_at IS NULL`,
                )
                .run(s.createdAt, grant.completing, s.userId).changes === 1;
        if (!holds) return false;
        db.prepare(
          `INSERT INTO dashboard_sessions
           (id_sha256, user_id, csrf, pending_totp, created_at, last_seen_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(s.idSha256, s.userId, s.csrf, s.pendingTotp ? 1 : 0, s.createdAt, s.lastSeenAt, s.expiresAt);
        return true;
      });
    },

    async session(idSha256) {
      const raw = db
        .prepare<[string], Omit<DashboardSession, 'pendingTotp'> & { pendingTotp: number }>(
          `SELECT id_sha256 AS idSha256, user_id AS userId, csrf, pending_totp AS pendingTotp,
             created_at AS createdAt, last_seen_at AS lastSeenAt, expires_at AS expiresAt,
             revoked_at AS revokedAt
           FROM dashboard_sessions WHERE id_sha256 = ?`,
        )
        .get(idSha256);
      return raw && { ...raw, pendingTotp: raw.pendingTotp === 1 };
    },

    async touchSession(idSha256, now) {
      await write(() =>
        db
          .prepare('UPDATE dashboard_sessions SET last_seen_at = ? WHERE id_sha256 = ?')
          .run(now.toISOString(), idSha256),
      );
    },

    async revokeSession(idSha256, now) {
      await write(() =>
        db
          .prepare('UPDATE dashboard_sessions SET revoked_at = ? WHERE id_sha256 = ? AND revoked_at IS NULL')
          .run(now.toISOString(), idSha256),
      );
    },

    async recordAudit(e) {
      await write(() =>
        db
          .prepare(
            `INSERT INTO dashboard_audit (at, agency, user_id, user_email, action, target, detail)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            e.at,
            e.agency,
            e.userId,
            e.userEmail,
            e.action,
            e.target,
            e.detail === null ? null : JSON.stringify(e.detail),
          ),
      );
    },

    async audit(agency, { limit, beforeId }) {
      return db
        .prepare<[string, number, number], Omit<AuditEntry, 'detail'> & { detail: string | null }>(
          `SELECT id, at, agency, user_email AS userEmail, action, target, detail FROM dashboard_audit
           WHERE agency = ? AND id < ? ORDER BY id DESC LIMIT ?`,
        )
        .all(agency, beforeId ?? Number.MAX_SAFE_INTEGER, limit)
        .map((row) => ({
          ...row,
          detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
        }));
    },

    async reportTokensOf(agency) {
      return db
        .prepare<[string], Omit<ReportTokenRow, 'agencies'> & { agencies: string }>(
          `SELECT jti, agencies, label, issued_at AS issuedAt, expires_at AS expiresAt, revoked_at AS revokedAt
           FROM report_tokens WHERE EXISTS (SELECT 1 FROM json_each(report_tokens.agencies) WHERE value = ?)
           ORDER BY issued_at DESC, jti`,
        )
        .all(agency)
        .map((raw) => ({ ...raw, agencies: JSON.parse(raw.agencies) as string[] }));
    },
  };
}
