export interface ReportTokenRow {
  jti: string;
  agencies: string[];
  label: string | null;
  issuedAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

/** The ids of minted report tokens, so a token can be revoked before it expires. */
export interface ReportTokensRepository {
  record(row: Omit<ReportTokenRow, 'revokedAt'>): Promise<void>;

  get(jti: string): Promise<ReportTokenRow | undefined>;

  /** False when there is no such unrevoked token. */
  revoke(jti: string, now: Date): Promise<boolean>;
}
