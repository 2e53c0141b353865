// hull:middleware:inbox — remembers processed message ids so a message
// delivered twice (webhook retries) is handled once (Hull §10.15).
//
// Ids live in the reserved table _hull_inbox_processed, per source, for a
// ttl. checkAndMark is one INSERT, so two workers receiving the same
// message at once agree on which of them handles it.

import { db } from "hull:db";
import { dialect } from "hull:dialect";
import { tables } from "hull:_tables";
import { time } from "hull:time";

let ttl = 604800; // seconds an id is remembered (7 days); set by init
let ready = false; // the table exists (checked once per worker VM)

function checkTtl(where, value) {
  if (!Number.isInteger(value) || value < 1) {
    throw new TypeError(`${where}: ttl must be a positive whole number of seconds, got ${value}`);
  }
  return value;
}

// Create the table if needed; opts.ttl (seconds, default 604800).
function init(opts = {}) {
  if (opts.ttl !== undefined) ttl = checkTtl("inbox.init", opts.ttl);
  const t = dialect.words();
  tables.create(`CREATE TABLE IF NOT EXISTS _hull_inbox_processed (
    message_id TEXT NOT NULL,
    source TEXT NOT NULL,
    processed_at ${t.int} NOT NULL,
    expires_at ${t.int} NOT NULL,
    PRIMARY KEY (source, message_id))`);
  tables.create("CREATE INDEX IF NOT EXISTS idx_hull_inbox_expires ON _hull_inbox_processed (expires_at)");
  ready = true;
}

function ensure() {
  if (!ready) init();
}

const usable = (id) => (typeof id === "string" && id !== "") || Number.isInteger(id);

const ttlOf = (where, opts) => (opts?.ttl !== undefined ? checkTtl(where, opts.ttl) : ttl);

// Whether message `id` from `source` (default "default") was processed and
// has not expired.
function isDuplicate(id, source) {
  if (!usable(id)) return false;
  source = source ?? "default";
  ensure();
  const [row] = db.query("SELECT expires_at FROM _hull_inbox_processed WHERE source = ? AND message_id = ?", [
    source,
    String(id),
  ]);
  if (!row) return false;
  if (row.expires_at <= time.now()) {
    db.exec("DELETE FROM _hull_inbox_processed WHERE source = ? AND message_id = ?", [source, String(id)]);
    return false;
  }
  return true;
}

// Record message `id` from `source` as processed (opts.ttl overrides the
// ttl for this id).
function markProcessed(id, source, opts) {
  source = source ?? "default";
  if (!usable(id)) throw new TypeError(`inbox.markProcessed: id must be a non-empty string, got ${id}`);
  const idTtl = ttlOf("inbox.markProcessed", opts);
  ensure();
  const now = time.now();
  db.exec(
    `INSERT INTO _hull_inbox_processed (message_id, source, processed_at, expires_at)
     VALUES (?, ?, ?, ?)
     ON CONFLICT (source, message_id) DO UPDATE SET
       processed_at = excluded.processed_at, expires_at = excluded.expires_at`,
    [String(id), source, now, now + idTtl],
  );
}

// true if `id` was already processed; else marks it and returns false.
// Atomic: of concurrent calls with one id, exactly one returns false.
function checkAndMark(id, source, opts) {
  if (!usable(id)) return false;
  source = source ?? "default";
  const idTtl = ttlOf("inbox.checkAndMark", opts);
  ensure();
  const now = time.now();
  // Inserts a new id or takes over an expired one; a live one is left alone.
  const marked = db.exec(
    `INSERT INTO _hull_inbox_processed (message_id, source, processed_at, expires_at)
     VALUES (?, ?, ?, ?)
     ON CONFLICT (source, message_id) DO UPDATE SET
       processed_at = excluded.processed_at, expires_at = excluded.expires_at
     WHERE _hull_inbox_processed.expires_at <= excluded.processed_at`,
    [String(id), source, now, now + idTtl],
  );
  return marked === 0;
}

// Delete expired ids → how many.
function cleanup() {
  ensure();
  return db.exec("DELETE FROM _hull_inbox_processed WHERE expires_at <= ?", [time.now()]);
}

export const inbox = { init, isDuplicate, markProcessed, checkAndMark, cleanup };
