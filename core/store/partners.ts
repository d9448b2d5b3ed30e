export interface PartnerPasswordRow {
  id: string;
  partnerId: string;
  label: string;
  hash: string;
}

export interface PartnerSummary {
  id: string;
  createdAt: string;
  passwords: { id: string; label: string; createdAt: string; revokedAt: string | null }[];
}

/** Partners of the bank webhook and their password hashes. */
export interface PartnersRepository {
  /** Adds a password (hash only) to a partner, creating the partner on first use. Older passwords stay valid. */
  addPassword(input: { partnerId: string; label: string; hash: string; now: Date }): Promise<string>;

  /** Revokes one password by label, or every active password of the partner but `exceptLabel`. */
  revokePasswords(input: {
    partnerId: string;
    label?: string;
    exceptLabel?: string;
    now: Date;
  }): Promise<number>;

  activePasswords(): Promise<PartnerPasswordRow[]>;

  isPasswordActive(passwordId: string): Promise<boolean>;

  list(): Promise<PartnerSummary[]>;
}
