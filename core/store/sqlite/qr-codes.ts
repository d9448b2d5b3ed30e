import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import type { QrCodeRow, QrCodesRepository } from '../qr-codes.ts';

/** The QR codes made by the generators, looked up by the token of their PNG URL. */
export function sqliteQrCodes(db: Db): QrCodesRepository {
  const insert = db.prepare<QrCodeRow>(
    `INSERT INTO qr_codes (token, agency_code, kind, content, created_at, expires_at)
     VALUES (@token, @agencyCode, @kind, @content, @createdAt, @expiresAt)`,
  );
  const byToken = db.prepare<[string], QrCodeRow>(
    `SELECT token, agency_code AS agencyCode, kind, content, created_at AS createdAt, expires_at AS expiresAt
     FROM qr_codes WHERE token = ?`,
  );
  // Through the connection's group commit: another process's write lock is waited for off this thread.
  const write = groupCommitter(db);
  return {
    async create(row: QrCodeRow): Promise<void> {
      await write(() => insert.run(row));
    },

    async get(token: string): Promise<QrCodeRow | undefined> {
      return byToken.get(token);
    },
  };
}
