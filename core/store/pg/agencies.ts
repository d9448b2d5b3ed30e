/** Zakat agencies (tenants), on PostgreSQL (the SQLite twin: ../agencies.ts). */
import {
  DEFAULT_AGENCY_SETTINGS,
  type AgenciesRepository,
  type AgencyRow,
  type AgencySettings,
} from '../agencies.ts';
import { statement, type PgDb } from './pool.ts';

interface RawAgency {
  code: string;
  name: string;
  createdAt: string;
  apiKey: string | null;
  apiKeyRotatedAt: string | null;
  settings: string;
}

const SELECT = `SELECT code, name, created_at AS "createdAt", api_key AS "apiKey",
  api_key_rotated_at AS "apiKeyRotatedAt", settings FROM agencies`;
// Read on every checkout, signed request and callback.
const BY_CODE = statement(`${SELECT} WHERE code = $1`);
const API_KEY = statement('SELECT api_key AS "apiKey" FROM agencies WHERE code = $1');

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

/** The agencies repository over a PostgreSQL pool. */
export function pgAgencies(db: PgDb): AgenciesRepository {
  return {
    async create(input) {
      const at = input.now.toISOString();
      const changed = await db.run(
        `INSERT INTO agencies (code, name, created_at, api_key, api_key_rotated_at, settings)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (code) DO NOTHING`,
        [
          input.code,
          input.name,
          at,
          input.apiKey,
          at,
          JSON.stringify({ ...DEFAULT_AGENCY_SETTINGS, ...input.settings }),
        ],
      );
      return changed === 1;
    },

    async get(code) {
      const raw = await db.row<RawAgency>(BY_CODE, [code]);
      return raw && toRow(raw);
    },

    async list() {
      return (await db.rows<RawAgency>(`${SELECT} ORDER BY code`)).map(toRow);
    },

    async apiKeyOf(code) {
      return (await db.row<{ apiKey: string | null }>(API_KEY, [code]))?.apiKey ?? undefined;
    },

    async rotateKey(code, apiKey, now) {
      return (
        (await db.run('UPDATE agencies SET api_key = $1, api_key_rotated_at = $2 WHERE code = $3', [
          apiKey,
          now.toISOString(),
          code,
        ])) === 1
      );
    },

    async update(code, change) {
      // The row is locked from the read to the write: two concurrent setting changes both land.
      return db.transaction(async (tx) => {
        const raw = await tx.row<RawAgency>(`${SELECT} WHERE code = $1 FOR UPDATE`, [code]);
        if (!raw) return false;
        const current = toRow(raw);
        await tx.run('UPDATE agencies SET name = $1, settings = $2 WHERE code = $3', [
          change.name ?? current.name,
          JSON.stringify({ ...current.settings, ...change.settings }),
          code,
        ]);
        return true;
      });
    },
  };
}
