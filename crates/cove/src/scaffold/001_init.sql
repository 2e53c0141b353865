-- The first migration. Files in migrations/ run once each, in name order,
-- each in its own transaction; `cove migrate new <name>` adds the next one.
CREATE TABLE notes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    text       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
