import type { Db } from './db.ts';

export type QrCodeKind = 'pay-url' | 'duitnow';

/** A generated QR code: what it encodes, for whom, and until when its PNG URL serves. */
export interface QrCodeRow {
  token: string;
  agencyCode: string;
  kind: QrCodeKind;
  content: string;
  createdAt: string;
  expiresAt: string;
}

/** The QR codes made by the generators, looked up by the token of their PNG URL. */
export function qrCodesRepository(db: Db) {
  const insert = db.prepare<QrCodeRow>(
    `INSERT INTO qr_codes (token, agency_code, kind, content, created_at, expires_at)
     VALUES (@token, @agencyCode, @kind, @content, @createdAt, @expiresAt)`,
  );
  const byToken = db.prepare<[string], QrCodeRow>(
    `SELECT token, agency_code AS agencyCode, kind, content, created_at AS createdAt, expires_at AS expiresAt
     FROM qr_codes WHERE token = ?`,
  );
  return {
    async create(row: QrCodeRow): Promise<void> {
      insert.run(row);
    },

    async get(token: string): Promise<QrCodeRow | undefined> {
      return byToken.get(token);
    },
  };
}
