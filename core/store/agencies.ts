import type { AgencyLogo } from '../agency-logo.ts';
import type { Db } from './db.ts';

export type PaymentMethod = 'fpx' | 'card' | 'ewallet';

/** An add charge: a fixed amount in sen, or a percentage of the amount (rounded half up to the sen). */
export type AddChargeRule = { fixedSen: number } | { percent: number };

/** What an agency (tenant) configures beyond its code, name and key. */
export interface AgencySettings {
  paymentCategories: string[];
  /** What payers read for a category, in English and Malay; a category without one shows its id. */
  categoryNames: Record<string, { en: string; ms: string }>;
  addCharges: Partial<Record<PaymentMethod, AddChargeRule>>;
  reportRecipients: string[];
  callbackHosts: string[];
  /** DuitNow QR merchant account; categoryCode (ISO 18245) defaults to 8661, religious organisations. */
  duitnow: { acquirerId?: string; merchantId?: string; name?: string; city?: string; categoryCode?: string };
  acceptUnsignedOrders: boolean;
  /** Shown on the payer pages, served by us at /agency-logo/<code>. */
  logo?: AgencyLogo;
}

export const DEFAULT_AGENCY_SETTINGS: AgencySettings = {
  paymentCategories: [],
  categoryNames: {},
  addCharges: {},
  reportRecipients: [],
  callbackHosts: [],
  duitnow: {},
  acceptUnsignedOrders: false,
};

export interface AgencyRow {
  code: string;
  name: string;
  createdAt: string;
  hasApiKey: boolean;
  apiKeyRotatedAt: string | null;
  settings: AgencySettings;
}

interface RawAgency {
  code: string;
  name: string;
  createdAt: string;
  apiKey: string | null;
  apiKeyRotatedAt: string | null;
  settings: string;
}

const SELECT = `SELECT code, name, created_at AS createdAt, api_key AS apiKey,
  api_key_rotated_at AS apiKeyRotatedAt, settings FROM agencies`;

function toRow(raw: RawAgency): AgencyRow {
  return {
    code: raw.code,
    name: raw.name,
    createdAt: raw.createdAt,
    hasApiKey: raw.apiKey !== null,
    apiKeyRotatedAt: raw.apiKeyRotatedAt,
    settings: { ...DEFAULT_AGENCY_SETTINGS, ...(JSON.parse(raw.settings) as Partial<AgencySettings>) },
  };
}

/** Zakat agencies (tenants). The API key is only ever returned by apiKeyOf, for signature checks. */
export function agenciesRepository(db: Db) {
  // Read on every checkout, signed request and callback: prepared once.
  const byCode = db.prepare<[string], RawAgency>(`${SELECT} WHERE code = ?`);
  const apiKeyByCode = db.prepare<[string], { apiKey: string | null }>(
    'SELECT api_key AS apiKey FROM agencies WHERE code = ?',
  );
  return {
    /** Creates an agency; false when the code is taken (nothing changes then). */
    async create(input: {
      code: string;
      name: string;
      apiKey: string;
      settings?: Partial<AgencySettings>;
      now: Date;
    }): Promise<boolean> {
      const at = input.now.toISOString();
      const result = db
        .prepare(
          `INSERT INTO agencies (code, name, created_at, api_key, api_key_rotated_at, settings)
           VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (code) DO NOTHING`,
        )
        .run(
          input.code,
          input.name,
          at,
          input.apiKey,
          at,
          JSON.stringify({ ...DEFAULT_AGENCY_SETTINGS, ...input.settings }),
        );
      return result.changes === 1;
    },

    async get(code: string): Promise<AgencyRow | undefined> {
      const raw = byCode.get(code);
      return raw && toRow(raw);
    },

    async list(): Promise<AgencyRow[]> {
      return db.prepare<[], RawAgency>(`${SELECT} ORDER BY code`).all().map(toRow);
    },

    /** The agency's API key, to verify or make signatures; undefined when it has none. */
    async apiKeyOf(code: string): Promise<string | undefined> {
      return apiKeyByCode.get(code)?.apiKey ?? undefined;
    },

    /** Replaces the API key at once (the old one stops working). False for an unknown agency. */
    async rotateKey(code: string, apiKey: string, now: Date): Promise<boolean> {
      return (
        db
          .prepare('UPDATE agencies SET api_key = ?, api_key_rotated_at = ? WHERE code = ?')
          .run(apiKey, now.toISOString(), code).changes === 1
      );
    },

    /** Changes the name and/or merges settings. False for an unknown agency. */
    async update(
      code: string,
      change: { name?: string; settings?: Partial<AgencySettings> },
    ): Promise<boolean> {
      return db
        .transaction(() => {
          const raw = db.prepare<[string], RawAgency>(`${SELECT} WHERE code = ?`).get(code);
          if (!raw) return false;
          const current = toRow(raw);
          db.prepare('UPDATE agencies SET name = ?, settings = ? WHERE code = ?').run(
            change.name ?? current.name,
            JSON.stringify({ ...current.settings, ...change.settings }),
            code,
          );
          return true;
        })
        .immediate();
    },
  };
}

export type AgenciesRepository = ReturnType<typeof agenciesRepository>;
