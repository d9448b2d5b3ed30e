import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import {
  DEFAULT_AGENCY_SETTINGS,
  type AgenciesRepository,
  type AgencyRow,
  type AgencySettings,
} from '../agencies.ts';

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

function toRow(raw: RawAgency, settings: AgencySettings = parseSettings(raw.settings)): AgencyRow {
  return {
    code: raw.code,
    name: raw.name,
    createdAt: raw.createdAt,
    hasApiKey: raw.apiKey !== null,
    apiKeyRotatedAt: raw.apiKeyRotatedAt,
    settings,
  };
}

function parseSettings(text: string): AgencySettings {
  return { ...DEFAULT_AGENCY_SETTINGS, ...(JSON.parse(text) as Partial<AgencySettings>) };
}

/** Freezes a value and everything in it, so one parse can be handed to every reader. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * Zakat agencies (tenants). The API key is only ever returned by apiKeyOf, for signature checks (and with a
 * callback's lease, to sign it: callbacks.claim).
 */
export function sqliteAgencies(db: Db): AgenciesRepository {
  // Writes through the connection's group commit: another process's write lock is waited for off this thread.
  const write = groupCommitter(db);
  // Read on every checkout, signed request and callback: prepared once.
  const byCode = db.prepare<[string], RawAgency>(`${SELECT} WHERE code = ?`);
  const apiKeyByCode = db.prepare<[string], { apiKey: string | null }>(
    'SELECT api_key AS apiKey FROM agencies WHERE code = ?',
  );
  // Each read still reads the row (a change by another process is seen at once); only the parse of the
  // settings text is kept, per agency, while that text is unchanged: a checkout reads them twice, and a
  // logo makes them large (decision 191). Frozen, since every reader shares them.
  const parsed = new Map<string, { text: string; settings: AgencySettings }>();
  const settingsOf = (raw: RawAgency): AgencySettings => {
    const known = parsed.get(raw.code);
    if (known?.text === raw.settings) return known.settings;
    // Its own copy of the defaults' arrays and objects: freezing must not reach the shared ones.
    const settings = deepFreeze({
      ...structuredClone(DEFAULT_AGENCY_SETTINGS),
      ...(JSON.parse(raw.settings) as Partial<AgencySettings>),
    });
    parsed.set(raw.code, { text: raw.settings, settings });
    return settings;
  };
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
      const result = await write(() =>
        db
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
          ),
      );
      return result.changes === 1;
    },

    async get(code: string): Promise<AgencyRow | undefined> {
      const raw = byCode.get(code);
      return raw && toRow(raw, settingsOf(raw));
    },

    async list(): Promise<AgencyRow[]> {
      return db
        .prepare<[], RawAgency>(`${SELECT} ORDER BY code`)
        .all()
        .map((raw) => toRow(raw));
    },

    /** The agency's API key, to verify or make signatures; undefined when it has none. */
    async apiKeyOf(code: string): Promise<string | undefined> {
      return apiKeyByCode.get(code)?.apiKey ?? undefined;
    },

    /** Replaces the API key at once (the old one stops working). False for an unknown agency. */
    async rotateKey(code: string, apiKey: string, now: Date): Promise<boolean> {
      return write(
        () =>
          db
            .prepare('UPDATE agencies SET api_key = ?, api_key_rotated_at = ? WHERE code = ?')
            .run(apiKey, now.toISOString(), code).changes === 1,
      );
    },

    /** Changes the name and/or merges settings. False for an unknown agency. */
    async update(
      code: string,
      change: { name?: string; settings?: Partial<AgencySettings> },
    ): Promise<boolean> {
      return write(() => {
        const raw = db.prepare<[string], RawAgency>(`${SELECT} WHERE code = ?`).get(code);
        if (!raw) return false;
        const current = toRow(raw);
        db.prepare('UPDATE agencies SET name = ?, settings = ? WHERE code = ?').run(
          change.name ?? current.name,
          JSON.stringify({ ...current.settings, ...change.settings }),
          code,
        );
        return true;
      });
    },
  };
}
