-- Secrets the app generates once per database (not in Hull). Every worker,
-- and every restart, reads the same row: a CSRF token made by one worker
-- must verify on the others (Hull drew a new secret on every start).
CREATE TABLE app_secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
