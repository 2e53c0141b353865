-- The middleware stdlib conformance app (specs/stdlib_middleware*.toml).
CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL);

-- Sessions the specs need to exist before any request: the ids are fixed
-- so that cases can send them as cookies, and some are dated in the past
-- so that expiry and sliding can be checked without waiting. Only a
-- migration may write the reserved table (app code may not); the schema
-- is the one session.init creates.
CREATE TABLE _hull_sessions (
  id TEXT PRIMARY KEY,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_accessed INTEGER NOT NULL,
  expires_at INTEGER NOT NULL);
CREATE INDEX idx__hull_sessions_expires ON _hull_sessions (expires_at);
INSERT INTO _hull_sessions VALUES
  ('seed-alice', '{"name":"alice","user_id":1}', 1, 1, 4102444800),
  ('seed-bob', '{"name":"bob","user_id":2}', 1, 1, 4102444800),
  ('seed-slide', '{"name":"slide"}', 1, 1, 4102444800),
  ('seed-planted', '{}', 1, 1, 4102444800),
  ('seed-expired', '{"name":"expired"}', 1, 1, 2),
  ('seed-old-1', '{}', 1, 1, 3),
  ('seed-old-2', '{}', 1, 1, 4);
