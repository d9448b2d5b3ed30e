-- Decision 293. A store that a production process has opened says so: a process not in production (no
-- NODE_ENV=production: demo data seeded, the sandbox acquirer) then refuses to start on it, instead of
-- seeding demo passwords and taking sandbox payments into production's data.
CREATE TABLE IF NOT EXISTS production_mark (
  id  integer PRIMARY KEY CHECK (id = 1),
  at  timestamptz NOT NULL
);
