/** The store the configuration selects: PostgreSQL when DATABASE_URL is set, else SQLite in DATA_DIR. */
import { openStore, type Store } from './index.ts';
import { openPgStore } from './pg/index.ts';

/** Opens the selected store (migrating it as needed). */
export function openConfiguredStore(config: {
  databaseUrl?: string | undefined;
  databaseFile: string;
  databaseIdleTransactionMs?: number;
}): Store {
  return config.databaseUrl
    ? openPgStore(config.databaseUrl, { idleTransactionMs: config.databaseIdleTransactionMs })
    : openStore(config.databaseFile);
}
