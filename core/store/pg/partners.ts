/** Partners of the bank webhook and their password hashes, on PostgreSQL (the SQLite twin: ../partners.ts). */
import { newId } from '../../ids.ts';
import type { PartnerPasswordRow, PartnerSummary, PartnersRepository } from '../partners.ts';
import { statement, type PgDb } from './pool.ts';

const ACTIVE = statement(
  `SELECT id, partner_id AS "partnerId", label, hash FROM partner_passwords WHERE revoked_at IS NULL`,
);
const IS_ACTIVE = statement(`SELECT 1 AS one FROM partner_passwords WHERE id = $1 AND revoked_at IS NULL`);

/** The partners repository over a PostgreSQL pool. */
export function pgPartners(db: PgDb): PartnersRepository {
  return {
    async addPassword(input) {
      const id = newId('pwd');
      const at = input.now.toISOString();
      await db.transaction(async (tx) => {
        await tx.run(`INSERT INTO partners (id, created_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [
          input.partnerId,
          at,
        ]);
        await tx.run(
          `INSERT INTO partner_passwords (id, partner_id, label, hash, created_at) VALUES ($1, $2, $3, $4, $5)`,
          [id, input.partnerId, input.label, input.hash, at],
        );
      });
      return id;
    },

    async revokePasswords(input) {
      return db.run(
        `UPDATE partner_passwords SET revoked_at = $1
         WHERE partner_id = $2 AND revoked_at IS NULL
           AND ($3::text IS NULL OR label = $3) AND ($4::text IS NULL OR label <> $4)`,
        [input.now.toISOString(), input.partnerId, input.label ?? null, input.exceptLabel ?? null],
      );
    },

    async activePasswords() {
      return db.rows<PartnerPasswordRow>(ACTIVE);
    },

    async isPasswordActive(passwordId) {
      return (await db.row(IS_ACTIVE, [passwordId])) !== undefined;
    },

    async list() {
      // One snapshot, so a password added between the two reads cannot show without its partner.
      return db.transaction(
        async (tx) => {
          const partners = await tx.rows<{ id: string; createdAt: string }>(
            `SELECT id, created_at AS "createdAt" FROM partners ORDER BY id`,
          );
          const passwords = await tx.rows<PartnerSummary['passwords'][number] & { partnerId: string }>(
            `SELECT id, partner_id AS "partnerId", label, created_at AS "createdAt", revoked_at AS "revokedAt"
             FROM partner_passwords ORDER BY created_at, label`,
          );
          return partners.map((p) => ({
            ...p,
            passwords: passwords
              .filter((pw) => pw.partnerId === p.id)
              .map(({ id, label, createdAt, revokedAt }) => ({ id, label, createdAt, revokedAt })),
          }));
        },
        { isolation: 'repeatable read', readOnly: true },
      );
    },
  };
}
