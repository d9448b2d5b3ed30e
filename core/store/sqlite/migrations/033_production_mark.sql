-- Decision 293. A store that a production process has opened says so: a process not in production (no
-- NODE_ENV=production: demo data seeded, the sandbox acquirer) then refuses to start on it, instead of
-- seeding demo passwords and taking sandbox payments into production's data.
CREATE TABLE production_mark (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  at  TEXT NOT NULL
) STRICT;
