import type { Db } from './db.ts';
import { groupCommitter } from './group-commit.ts';
import { newId } from '../../ids.ts';
import type { PartnerPasswordRow, PartnerSummary, PartnersRepository } from '../partners.ts';

/** Partners of the bank webhook and their password hashes. */
export function sqlitePartners(db: Db): PartnersRepository {
  // Writes through the connection's group commit: another process's write lock is waited for off this thread.
  const write = groupCommitter(db);
  const selectActive = db.prepare<[], PartnerPasswordRow>(
    `SELECT id, partner_id AS partnerId, label, hash FROM partner_passwords WHERE revoked_at IS NULL`,
  );
  const selectIsActive = db.prepare<[string], { one: 1 }>(
    `SELECT 1 AS one FROM partner_passwords WHERE id = ? AND revoked_at IS NULL`,
  );

  return {
    /** Adds a password (hash only) to a partner, creating the partner on first use. Older passwords stay valid. */
    async addPassword(input: { partnerId: string; label: string; hash: string; now: Date }): Promise<string> {
      const id = newId('pwd');
      const at = input.now.toISOString();
      await write(() => {
        db.prepare(`INSERT INTO partners (id, created_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`).run(
          input.partnerId,
          at,
        );
        db.prepare(
          `INSERT INTO partner_passwords (id, partner_id, label, hash, created_at) VALUES (?, ?, ?, ?, ?)`,
        ).run(id, input.partnerId, input.label, input.hash, at);
      });
      return id;
    },

    /** Revokes one password by label, or every active password of the partner but `keepLabel`. */
    async revokePasswords(input: {
      partnerId: string;
      label?: string;
      exceptLabel?: string;
      now: Date;
    }): Promise<number> {
      const result = await write(() =>
        db
          .prepare(
            `UPDATE partner_passwords SET revoked_at = @at
           WHERE partner_id = @partnerId AND revoked_at IS NULL
             AND (@label IS NULL OR label = @label)
             AND (@exceptLabel IS NULL OR label <> @exceptLabel)`,
          )
          .run({
            at: input.now.toISOString(),
            partnerId: input.partnerId,
            label: input.label ?? null,
            exceptLabel: input.exceptLabel ?? null,
          }),
      );
      return result.changes;
    },

    async activePasswords(): Promise<PartnerPasswordRow[]> {
      return selectActive.all();
    },

    async isPasswordActive(passwordId: string): Promise<boolean> {
      return selectIsActive.get(passwordId) !== undefined;
    },

    async list(): Promise<PartnerSummary[]> {
      const partners = db
        .prepare<[], { id: string; createdAt: string }>(
          `SELECT id, created_at AS createdAt FROM partners ORDER BY id`,
        )
        .all();
      const passwords = db
        .prepare<
          [],
          { id: string; partnerId: string; label: string; createdAt: string; revokedAt: string | null }
        >(
          `SELECT id, partner_id AS partnerId, label, created_at AS createdAt, revoked_at AS revokedAt
           FROM partner_passwords ORDER BY created_at, label`,
        )
        .all();
      return partners.map((p) => ({
        ...p,
        passwords: passwords
          .filter((pw) => pw.partnerId === p.id)
          .map(({ id, label, createdAt, revokedAt }) => ({ id, label, createdAt, revokedAt })),
      }));
    },
  };
}
