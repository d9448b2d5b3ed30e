/** The dashboard's users, sessions and audit log on PostgreSQL (the SQLite twin: ../sqlite/dashboard-users.ts). */
import { statement, type PgDb, type Queryable } from './pool.ts';
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

const USER_COLUMNS = `id, email, name, disabled_at AS "disabledAt", totp_secret AS "totpSecret",
  created_at AS "createdAt", password_hash AS "passwordHash"`;

const USER_BY_ID = statement(`SELECT ${USER_COLUMNS} FROM dashboard_users WHERE id = $1`);
// Without case, as SQLite's COLLATE NOCASE (the unique index is on lower(email)).
const USER_BY_EMAIL = statement(`SELECT ${USER_COLUMNS} FROM dashboard_users WHERE lower(email) = lower($1)`);
const USERS = statement(`SELECT ${USER_COLUMNS} FROM dashboard_users ORDER BY email`);
const MEMBERSHIPS = statement(
  `SELECT m.agency, a.name AS "agencyName", m.role FROM dashboard_memberships m
   JOIN agencies a ON a.code = m.agency WHERE m.user_id = $1 ORDER BY m.agency`,
);
const INSERT_USER = statement(
  `INSERT INTO dashboard_users (email, name, password_hash, created_at, password_changed_at)
   VALUES ($1, $2, $3, $4, $4) ON CONFLICT DO NOTHING RETURNING id`,
);
const DELETE_MEMBERSHIP = statement('DELETE FROM dashboard_memberships WHERE user_id = $1 AND agency = $2');
const UPSERT_MEMBERSHIP = statement(
  `INSERT INTO dashboard_memberships (user_id, agency, role) VALUES ($1, $2, $3)
   ON CONFLICT (user_id, agency) DO UPDATE SET role = excluded.role`,
);
const REVOKE_ALL = statement(
  'UPDATE dashboard_sessions SET revoked_at = $1 WHERE user_id = $2 AND revoked_at IS NULL',
);
const LOCK_USER = statement(
  `SELECT password_hash AS "passwordHash", disabled_at AS "disabledAt" FROM dashboard_users WHERE id = $1 FOR SHARE`,
);
const COMPLETE_PENDING = statement(
  `UPDATE dashboard_sessions SET revoked_at = $1
   WHERE id_sha256 = $2 AND user_id = $3 AND pending_totp = 1 AND revoked_at IS NULL`,
);
const INSERT_SESSION = statement(
  `INSERT INTO dashboard_sessions (id_sha256, user_id, csrf, pending_totp, created_at, last_seen_at, expires_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7)`,
);
const SESSION = statement(
  `SELECT id_sha256 AS "idSha256", user_id AS "userId", csrf, pending_totp AS "pendingTotp",
     created_at AS "createdAt", last_seen_at AS "lastSeenAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"
   FROM dashboard_sessions WHERE id_sha256 = $1`,
);
const AUDIT = statement(
  `SELECT id, at, agency, user_email AS "userEmail", action, target, detail FROM dashboard_audit
   WHERE agency = $1 AND id < $2 ORDER BY id DESC LIMIT $3`,
);
// report_tokens.agencies is a JSON array in text (read back byte for byte, as SQLite's).
const TOKENS_OF = statement(
  `SELECT jti, agencies, label, issued_at AS "issuedAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"
   FROM report_tokens WHERE agencies::jsonb ? $1 ORDER BY issued_at DESC, jti`,
);

async function credentials(
  q: Queryable,
  raw: UserRaw | undefined,
): Promise<DashboardCredentials | undefined> {
  if (!raw) return undefined;
  return {
    id: raw.id,
    email: raw.email,
    name: raw.name,
    disabledAt: raw.disabledAt,
    totp: raw.totpSecret !== null,
    createdAt: raw.createdAt,
    memberships: await q.rows<DashboardMembership>(MEMBERSHIPS, [raw.id]),
    passwordHash: raw.passwordHash,
    totpSecret: raw.totpSecret,
  };
}

async function publicUser(q: Queryable, raw: UserRaw | undefined): Promise<DashboardUser | undefined> {
  const full = await credentials(q, raw);
  if (!full) return undefined;
  const { passwordHash: _hash, totpSecret: _secret, ...user } = full;
  return user;
}

async function setMembership(q: Queryable, userId: number, agency: string, role: DashboardRole | null) {
  if (role === null) await q.run(DELETE_MEMBERSHIP, [userId, agency]);
  else await q.run(UPSERT_MEMBERSHIP, [userId, agency, role]);
}

/** The PostgreSQL implementation of {@link DashboardUsersRepository}. */
export function pgDashboardUsers(db: PgDb): DashboardUsersRepository {
  return {
    async create(input) {
      return db.transaction(async (tx) => {
        const row = await tx.row<{ id: number }>(INSERT_USER, [
          input.email,
          input.name,
          input.passwordHash,
          input.now.toISOString(),
        ]);
        if (!row) return undefined;
        for (const m of input.memberships) await setMembership(tx, row.id, m.agency, m.role);
        return publicUser(tx, await tx.row<UserRaw>(USER_BY_ID, [row.id]));
      });
    },

    async get(id) {
      return publicUser(db, await db.row<UserRaw>(USER_BY_ID, [id]));
    },

    async byEmail(email) {
      return credentials(db, await db.row<UserRaw>(USER_BY_EMAIL, [email]));
    },

    async list() {
      const users: DashboardUser[] = [];
      for (const raw of await db.rows<UserRaw>(USERS)) {
        const user = await publicUser(db, raw);
        if (user) users.push(user);
      }
      return users;
    },

    async update(id, change) {
      return db.transaction(async (tx) => {
        // Locked, so a concurrent change of the same user waits rather than interleaving memberships.
        if (!(await tx.row('SELECT 1 FROM dashboard_users WHERE id = $1 FOR UPDATE', [id]))) return false;
        if (change.name !== undefined)
          await tx.run('UPDATE dashboard_users SET name = $1 WHERE id = $2', [change.name, id]);
        for (const m of change.memberships ?? []) await setMembership(tx, id, m.agency, m.role);
        return true;
      });
    },

    async setPassword(id, passwordHash, now) {
      return db.transaction(async (tx) => {
        const changed =
          (await tx.run(
            'UPDATE dashboard_users SET password_hash = $1, password_changed_at = $2 WHERE id = $3',
            [passwordHash, now.toISOString(), id],
          )) === 1;
        if (changed) await tx.run(REVOKE_ALL, [now.toISOString(), id]);
        return changed;
      });
    },

    async setDisabled(id, disabled, now) {
      return db.transaction(async (tx) => {
        const changed =
          (await tx.run('UPDATE dashboard_users SET disabled_at = $1 WHERE id = $2', [
            disabled ? now.toISOString() : null,
            id,
          ])) === 1;
        if (changed && disabled) await tx.run(REVOKE_ALL, [now.toISOString(), id]);
        return changed;
      });
    },

    async setTotp(id, secret) {
      return (
        (await db.run('UPDATE dashboard_users SET totp_secret = $1, totp_last_step = NULL WHERE id = $2', [
          secret,
          id,
        ])) === 1
      );
    },

    async useTotpStep(id, step) {
      // One statement: the row lock makes two sign-ins with the same code race to one winner.
      return (
        (await db.run(
          `UPDATE dashboard_users SET totp_last_step = $1
           WHERE id = $2 AND (totp_last_step IS NULL OR totp_last_step < $1)`,
          [step, id],
        )) === 1
      );
    },

    async createSession(s, grant) {
      // Sessions over for a day are pruned at sign-in, as on SQLite.
      const dayAgo = new Date(Date.parse(s.createdAt) - 86_400_000).toISOString();
      await db.run('DELETE FROM dashboard_sessions WHERE expires_at < $1', [dayAgo]);
      return db.transaction(async (tx) => {
        // The user's row locked until this session is stored: a reset or a disable (which updates it, then
        // ends the user's sessions) committed first is seen here; one not yet committed waits, then ends
        // this session too. Read committed, so the row read is the one committed last.
        const user = await tx.row<{ passwordHash: string; disabledAt: string | null }>(LOCK_USER, [s.userId]);
        if (!user || user.disabledAt !== null) return false;
        const holds =
          'passwordHash' in grant
            ? user.passwordHash === grant.passwordHash
            : (await tx.run(COMPLETE_PENDING, [s.createdAt, grant.completing, s.userId])) === 1;
        if (!holds) return false;
        await tx.run(INSERT_SESSION, [
          s.idSha256,
          s.userId,
          s.csrf,
          s.pendingTotp ? 1 : 0,
          s.createdAt,
          s.lastSeenAt,
          s.expiresAt,
        ]);
        return true;
      });
    },

    async session(idSha256) {
      const raw = await db.row<Omit<DashboardSession, 'pendingTotp'> & { pendingTotp: number }>(SESSION, [
        idSha256,
      ]);
      return raw && { ...raw, pendingTotp: raw.pendingTotp === 1 };
    },

    async touchSession(idSha256, now) {
      await db.run('UPDATE dashboard_sessions SET last_seen_at = $1 WHERE id_sha256 = $2', [
        now.toISOString(),
        idSha256,
      ]);
    },

    async revokeSession(idSha256, now) {
      await db.run(
        'UPDATE dashboard_sessions SET revoked_at = $1 WHERE id_sha256 = $2 AND revoked_at IS NULL',
        [now.toISOString(), idSha256],
      );
    },

    async recordAudit(e) {
      await db.run(
        `INSERT INTO dashboard_audit (at, agency, user_id, user_email, action, target, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          e.at,
          e.agency,
          e.userId,
          e.userEmail,
          e.action,
          e.target,
          e.detail === null ? null : JSON.stringify(e.detail),
        ],
      );
    },

    async audit(agency, { limit, beforeId }) {
      const rows = await db.rows<Omit<AuditEntry, 'detail'> & { detail: string | null }>(AUDIT, [
        agency,
        beforeId ?? Number.MAX_SAFE_INTEGER,
        limit,
      ]);
      return rows.map((row) => ({
        ...row,
        detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
      }));
    },

    async reportTokensOf(agency) {
      const rows = await db.rows<Omit<ReportTokenRow, 'agencies'> & { agencies: string }>(TOKENS_OF, [
        agency,
      ]);
      return rows.map((raw) => ({ ...raw, agencies: JSON.parse(raw.agencies) as string[] }));
    },
  };
}
