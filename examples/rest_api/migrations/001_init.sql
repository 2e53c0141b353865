CREATE TABLE tasks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    title      TEXT NOT NULL,
    done       INTEGER DEFAULT 0,
    created_at INTEGER
);
