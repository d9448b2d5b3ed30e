import type { ReportTokenRow } from './report-tokens.ts';

/** What a dashboard user may do in one agency: read (`viewer`), or also keys, tokens and settings. */
export type DashboardRole = 'viewer' | 'admin';

export interface DashboardMembership {
  agency: string;
  agencyName: string;
  role: DashboardRole;
}

export interface DashboardUser {
  id: number;
  email: string;
  name: string;
  disabledAt: string | null;
  /** True when the TOTP second factor is on. */
  totp: boolean;
  createdAt: string;
  /** In agency code order. */
  memberships: DashboardMembership[];
}

/** A user with what signing in checks (never shown). */
export interface DashboardCredentials extends DashboardUser {
  passwordHash: string;
  totpSecret: string | null;
}

export interface DashboardSession {
  idSha256: string;
  userId: number;
  csrf: string;
  pendingTotp: boolean;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  revokedAt: string | null;
}

/**
 * What a sign-in checked, which must still hold when its session is stored: the password hash it verified
 * (the password step), or the idSha256 of the half-open session the TOTP code completes (a reset or a
 * disable ends that one). A reset or a disable committed by any process between the check and the store
 * makes createSession refuse; one committed after it ends the session stored.
 */
export type SessionGrant = { passwordHash: string } | { completing: string };

export interface AuditEntry {
  id: number;
  at: string;
  agency: string;
  userEmail: string;
  action: string;
  target: string;
  detail: Record<string, unknown> | null;
}

/** The dashboard's users, memberships, sessions and audit log (migration 014). */
export interface DashboardUsersRepository {
  /** Undefined when the e-mail is taken (compared without case). */
  create(input: {
    email: string;
    name: string;
    passwordHash: string;
    memberships: { agency: string; role: DashboardRole }[];
    now: Date;
  }): Promise<DashboardUser | undefined>;
  get(id: number): Promise<DashboardUser | undefined>;
  byEmail(email: string): Promise<DashboardCredentials | undefined>;
  list(): Promise<DashboardUser[]>;
  /** Renames the user; sets (role) or removes (null) memberships. False when there is no such user. */
  update(
    id: number,
    change: { name?: string; memberships?: { agency: string; role: DashboardRole | null }[] },
  ): Promise<boolean>;
  /** A new password hash; every session of the user ends. */
  setPassword(id: number, passwordHash: string, now: Date): Promise<boolean>;
  /** Disables (every session ends) or enables the user. */
  setDisabled(id: number, disabled: boolean, now: Date): Promise<boolean>;
  /** Turns TOTP on with this secret, or off (null). */
  setTotp(id: number, secret: string | null): Promise<boolean>;
  /** Records a TOTP time step as used; false when it (or a later one) was used already: no replay. */
  useTotpStep(id: number, step: number): Promise<boolean>;

  /**
   * Stores a new session if the user is enabled and `grant` still holds, under the user's row lock (false:
   * nothing stored); completing a half-open session ends it. Sessions that ended over a day before the new
   * one's start are deleted.
   */
  createSession(session: Omit<DashboardSession, 'revokedAt'>, grant: SessionGrant): Promise<boolean>;
  session(idSha256: string): Promise<DashboardSession | undefined>;
  /** Marks the session seen now (its idle expiry restarts). */
  touchSession(idSha256: string, now: Date): Promise<void>;
  revokeSession(idSha256: string, now: Date): Promise<void>;

  recordAudit(entry: Omit<AuditEntry, 'id'> & { userId: number | null }): Promise<void>;
  /** An agency's audit log, newest first; `beforeId` pages back. */
  audit(agency: string, options: { limit: number; beforeId?: number }): Promise<AuditEntry[]>;
  /** The report tokens that cover the agency, newest first (the dashboard's API access page). */
  reportTokensOf(agency: string): Promise<ReportTokenRow[]>;
}
