/** The generators' QR codes on PostgreSQL (the SQLite twin: ../sqlite/qr-codes.ts). */
import { statement, type PgDb } from './pool.ts';
import type { QrCodeRow, QrCodesRepository } from '../qr-codes.ts';

const INSERT = statement(
  `INSERT INTO qr_codes (token, agency_code, kind, content, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
);
const BY_TOKEN = statement(
  `SELECT token, agency_code AS "agencyCode", kind, content, created_at AS "createdAt", expires_at AS "expiresAt"
   FROM qr_codes WHERE token = $1`,
);

/** The QR codes made by the generators, looked up by the token of their PNG URL. */
export function pgQrCodes(db: PgDb): QrCodesRepository {
  return {
    async create(row) {
      await db.run(INSERT, [row.token, row.agencyCode, row.kind, row.content, row.createdAt, row.expiresAt]);
    },

    async get(token) {
      return db.row<QrCodeRow>(BY_TOKEN, [token]);
    },
  };
}
