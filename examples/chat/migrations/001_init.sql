-- What was said in each room (the app keeps the last 50 of each), and the
-- secrets the app makes once per database: a CSRF token made by one worker
-- must verify on the others, and after a restart.
CREATE TABLE messages (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    room TEXT NOT NULL,
    name TEXT NOT NULL,
    text TEXT NOT NULL,
    at   INTEGER NOT NULL
);

CREATE INDEX idx_messages_room ON messages (room, id);

CREATE TABLE app_secrets (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
