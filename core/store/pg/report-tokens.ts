/** Report token ids on PostgreSQL (the SQLite twin: ../sqlite/report-tokens.ts). */
import { statement, type PgDb } from './pool.ts';
import type { ReportTokenRow, ReportTokensRepository } from '../report-tokens.ts';

const INSERT = statement(
  'INSERT INTO report_tokens (jti, agencies, label, issued_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
);
// Read on every report request that carries a token.
const BY_JTI = statement(
  `SELECT jti, agencies, label, issued_at AS "issuedAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"
   FROM report_tokens WHERE jti = $1`,
);
const REVOKE = statement('UPDATE report_tokens SET revoked_at = $1 WHERE jti = $2 AND revoked_at IS NULL');

/** The ids of minted report tokens, so a token can be revoked before it expires. */
export function pgReportTokens(db: PgDb): ReportTokensRepository {
  return {
    async record(row) {
      await db.run(INSERT, [row.jti, JSON.stringify(row.agencies), row.label, row.issuedAt, row.expiresAt]);
    },

    async get(jti) {
      const raw = await db.row<Omit<ReportTokenRow, 'agencies'> & { agencies: string }>(BY_JTI, [jti]);
      return raw && { ...raw, agencies: JSON.parse(raw.agencies) as string[] };
    },

    async revoke(jti, now) {
      return (await db.run(REVOKE, [now.toISOString(), jti])) === 1;
    },
  };
}
