-- One row per send attempt: status is 'sent' or 'failed' (with the error).
CREATE TABLE email_log (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    recipient    TEXT NOT NULL,
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL,
    content_type TEXT DEFAULT 'text/plain',
    cc           TEXT,
    reply_to     TEXT,
    status       TEXT NOT NULL,
    error        TEXT,
    created_at   INTEGER
);
