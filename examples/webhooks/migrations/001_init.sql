-- Subscriptions: events is a comma-separated list of event types, or "*".
CREATE TABLE webhooks (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    url        TEXT NOT NULL,
    events     TEXT NOT NULL,
    active     INTEGER DEFAULT 1,
    created_at INTEGER
);

-- Every event posted to /events, as the JSON payload sent to subscribers.
CREATE TABLE event_log (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    event_type TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at INTEGER
);
