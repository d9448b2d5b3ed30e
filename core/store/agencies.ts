import type { Db } from './db.ts';

export interface AgencyRow {
  code: string;
  name: string;
  createdAt: string;
}

/** Zakat agencies (tenants). */
export function agenciesRepository(db: Db) {
  return {
    /** Creates the agency or renames it; returns true when it was new. */
    async upsert(input: { code: string; name: string; now: Date }): Promise<boolean> {
      const existed = db.prepare('SELECT 1 FROM agencies WHERE code = ?').get(input.code) !== undefined;
      db.prepare(
        `INSERT INTO agencies (code, name, created_at) VALUES (?, ?, ?)
         ON CONFLICT (code) DO UPDATE SET name = excluded.name`,
      ).run(input.code, input.name, input.now.toISOString());
      return !existed;
    },

    async list(): Promise<AgencyRow[]> {
      return db
        .prepare<[], AgencyRow>('SELECT code, name, created_at AS createdAt FROM agencies ORDER BY code')
        .all();
    },
  };
}

export type AgenciesRepository = ReturnType<typeof agenciesRepository>;
