// hull:middleware:session — server-side sessions in the database (Hull §10.4).
//
// Rows live in the reserved table _hull_sessions, so every worker (and
// every restart) sees the same sessions. Loading a session slides its
// expiry. The table is created by session.init() or, if the app never
// calls it, on first use with the default ttl.

import { db } from "hull:db";
import { dialect } from "hull:dialect";
import { tables } from "hull:_tables";
import { crypto } from "hull:crypto";
import { time } from "hull:time";

let ttl = 86400; // seconds; set by init
let ready = false; // the table exists (checked once per worker VM)

const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");

// Create the table and index if needed; opts.ttl (seconds, default 86400)
// is how long a session lives after its last use.
function init(opts = {}) {
  if (opts.ttl !== undefined) {
    if (!Number.isInteger(opts.ttl) || opts.ttl < 1) {
      throw new TypeError(`session.init: opts.ttl must be a positive whole number of seconds, got ${opts.ttl}`);
    }
    ttl = opts.ttl;
  }
  const t = dialect.words();
  tables.create(`CREATE TABLE IF NOT EXISTS _hull_sessions (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    created_at ${t.int} NOT NULL,
    last_accessed ${t.int} NOT NULL,
    expires_at ${t.int} NOT NULL)`);
  tables.create("CREATE INDEX IF NOT EXISTS idx__hull_sessions_expires ON _hull_sessions (expires_at)");
  ready = true;
}

function ensure() {
  if (!ready) init();
}

// Store `data` (JSON-serializable) in a new session → its id (64 lowercase
// hex characters from 32 random bytes).
function create(data) {
  ensure();
  const id = hex(crypto.random(32));
  const now = time.now();
  db.exec(
    "INSERT INTO _hull_sessions (id, data, created_at, last_accessed, expires_at) VALUES (?, ?, ?, ?, ?)",
    [id, JSON.stringify(data ?? {}), now, now, now + ttl],
  );
  return id;
}

// The data of session `id`, or null if it does not exist or has expired
// (an expired row is deleted). A live session's expiry slides to now + ttl.
function load(id) {
  if (typeof id !== "string" || id === "") return null;
  ensure();
  const [row] = db.query("SELECT data, last_accessed, expires_at FROM _hull_sessions WHERE id = ?", [id]);
  if (!row) return null;
  const now = time.now();
  if (row.expires_at <= now) {
    db.exec("DELETE FROM _hull_sessions WHERE id = ?", [id]);
    return null;
  }
  // Times are in seconds: a second request within the same second would
  // write the same values, so skip the write.
  if (row.last_accessed < now) {
    db.exec("UPDATE _hull_sessions SET last_accessed = ?, expires_at = ? WHERE id = ?", [now, now + ttl, id]);
  }
  return JSON.parse(row.data);
}

// Replace the data of a live session and slide its expiry → true, or false
// if there is no such live session.
function update(id, data) {
  ensure();
  const now = time.now();
  return (
    db.exec(
      "UPDATE _hull_sessions SET data = ?, last_accessed = ?, expires_at = ? WHERE id = ? AND expires_at > ?",
      [JSON.stringify(data ?? {}), now, now + ttl, id, now],
    ) > 0
  );
}

// Delete session `id` → true if it existed.
function destroy(id) {
  ensure();
  return db.exec("DELETE FROM _hull_sessions WHERE id = ?", [id]) > 0;
}

// Delete every expired session → how many.
function cleanup() {
  ensure();
  return db.exec("DELETE FROM _hull_sessions WHERE expires_at <= ?", [time.now()]);
}

export const session = { init, create, load, update, destroy, cleanup };
