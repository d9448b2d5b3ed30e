import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import type { ReportTokenRow, ReportTokensRepository } from '../report-tokens.ts';

/** The ids of minted report tokens, so a token can be revoked before it expires. */
export function sqliteReportTokens(db: Db): ReportTokensRepository {
  // Through the connection's group commit: another process's write lock is waited for off this thread.
  const write = groupCommitter(db);
  return {
    async record(row: Omit<ReportTokenRow, 'revokedAt'>): Promise<void> {
      await write(() =>
        db
          .prepare(
            'INSERT INTO report_tokens (jti, agencies, label, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)',
          )
          .run(row.jti, JSON.stringify(row.agencies), row.label, row.issuedAt, row.expiresAt),
      );
    },

    async get(jti: string): Promise<ReportTokenRow | undefined> {
      const raw = db
        .prepare<[string], Omit<ReportTokenRow, 'agencies'> & { agencies: string }>(
          `SELECT jti, agencies, label, issued_at AS issuedAt, expires_at AS expiresAt, revoked_at AS revokedAt
           FROM report_tokens WHERE jti = ?`,
        )
        .get(jti);
      return raw && { ...raw, agencies: JSON.parse(raw.agencies) as string[] };
    },

    /** False when there is no such unrevoked token. */
    async revoke(jti: string, now: Date): Promise<boolean> {
      return write(
        () =>
          db
            .prepare('UPDATE report_tokens SET revoked_at = ? WHERE jti = ? AND revoked_at IS NULL')
            .run(now.toISOString(), jti).changes === 1,
      );
    },
  };
}
