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
export interface QrCodesRepository {
  create(row: QrCodeRow): Promise<void>;

  get(token: string): Promise<QrCodeRow | undefined>;
}
