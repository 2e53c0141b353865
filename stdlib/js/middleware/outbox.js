// hull:middleware:outbox — the transactional outbox (Hull §10.14).
//
// A handler enqueues outgoing messages in the same database transaction as
// the change they announce (a webhook per new order, say); flush()
// delivers what is due with http.post and retries failures with backoff.
// Items live in the reserved table _hull_outbox, shared by every worker.
//
// A flush claims its items in one UPDATE before sending: it pushes their
// next attempt a lease into the future, so a flush running at the same time
// on another worker (or, on PostgreSQL, another process) skips them, and an
// item whose flush died mid-way is retried once the lease ends. flush() is
// Hull's synchronous form and blocks the worker while it sends;
// `await outbox.flushAsync()` (Cove) sends with http.postAsync and leaves
// the worker free meanwhile.

import { db } from "hull:db";
import { dialect } from "hull:dialect";
import { tables } from "hull:_tables";
import { http } from "hull:http";
import { time } from "hull:time";

let maxAttempts = 5; // default per item; set by init
let ready = false; // the table exists (checked once per worker VM)

const LEASE = 300; // seconds a claimed item stays hidden from other flushes
const MAX_BACKOFF = 3600; // seconds
const DELIVERABLE = new Set(["webhook", "http"]);

function whole(where, name, value, min) {
  if (!Number.isInteger(value) || value < min) {
    throw new TypeError(`${where}: ${name} must be a whole number >= ${min}, got ${value}`);
  }
  return value;
}

// Create the table if needed; opts.maxAttempts (default 5) is how often an
// item is tried before it is marked failed.
function init(opts = {}) {
  if (opts.maxAttempts !== undefined) maxAttempts = whole("outbox.init", "maxAttempts", opts.maxAttempts, 1);
  const t = dialect.words();
  tables.create(`CREATE TABLE IF NOT EXISTS _hull_outbox (
    id ${t.id},
    kind TEXT NOT NULL,
    destination TEXT NOT NULL,
    payload TEXT NOT NULL,
    headers TEXT,
    idempotency_key TEXT,
    attempts ${t.int} NOT NULL DEFAULT 0,
    max_attempts ${t.int} NOT NULL DEFAULT 5,
    next_attempt_at ${t.int} NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    created_at ${t.int} NOT NULL,
    delivered_at ${t.int},
    last_error TEXT)`);
  tables.create("CREATE INDEX IF NOT EXISTS idx_hull_outbox_due ON _hull_outbox (state, next_attempt_at)");
  tables.create("CREATE INDEX IF NOT EXISTS idx_hull_outbox_destination ON _hull_outbox (destination, id)");
  ready = true;
}

function ensure() {
  if (!ready) init();
}

const blank = (v) => v === undefined || v === null || v === "";

// Add a message → its id. Fields: kind ("webhook" or "http" are delivered
// by flush), destination (URL), payload (string; an object is
// JSON-encoded), headers (object or JSON string), idempotencyKey (sent as
// Idempotency-Key), maxAttempts, delay (seconds before the first attempt).
// The snake_case names idempotency_key and max_attempts work too.
function enqueue(item) {
  if (typeof item !== "object" || item === null) {
    throw new TypeError(`outbox.enqueue: expected an object {kind, destination, payload}, got ${item}`);
  }
  for (const field of ["kind", "destination", "payload"]) {
    if (blank(item[field])) throw new TypeError(`outbox.enqueue: ${field} is required`);
  }
  const payload = typeof item.payload === "string" ? item.payload : JSON.stringify(item.payload);
  const headers = blank(item.headers) || typeof item.headers === "string" ? item.headers : JSON.stringify(item.headers);
  const itemMax = item.maxAttempts ?? item.max_attempts;
  const attempts = itemMax !== undefined ? whole("outbox.enqueue", "maxAttempts", itemMax, 1) : maxAttempts;
  const delay = item.delay !== undefined ? whole("outbox.enqueue", "delay", item.delay, 0) : 0;
  ensure();
  const now = time.now();
  db.exec(
    `INSERT INTO _hull_outbox (kind, destination, payload, headers,
       idempotency_key, max_attempts, next_attempt_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [item.kind, item.destination, payload, headers ?? null, item.idempotencyKey ?? item.idempotency_key ?? null,
      attempts, now + delay, now],
  );
  return db.lastId();
}

// The items due now (at most `limit`), claimed for this flush.
function claim(opts) {
  const limit = opts.limit !== undefined ? whole("outbox.flush", "limit", opts.limit, 1) : 50;
  ensure();
  const now = time.now();
  const items = db.query(
    `UPDATE _hull_outbox SET next_attempt_at = ?
     WHERE id IN (SELECT id FROM _hull_outbox
       WHERE state = 'pending' AND next_attempt_at <= ?
       ORDER BY next_attempt_at, id LIMIT ? ${dialect.words().lock})
     RETURNING id, kind, destination, payload, headers, idempotency_key, attempts, max_attempts`,
    [now + LEASE, now, limit],
  );
  return items.sort((a, b) => a.id - b.id);
}

// What to post for `item`, or {error} if it cannot be sent.
function request(item) {
  if (!DELIVERABLE.has(item.kind)) return { error: `unsupported outbox kind: ${item.kind}` };
  let headers = {};
  try {
    headers = JSON.parse(item.headers ?? "{}") ?? {};
  } catch {
    // Unreadable headers: send without them.
  }
  const given = Object.keys(headers).some((n) => n.toLowerCase() === "idempotency-key");
  if (item.idempotency_key !== null && !given) headers["Idempotency-Key"] = item.idempotency_key;
  return { args: [item.destination, item.payload, { headers }] };
}

// An http response as an outcome: {ok} or {ok: false, error}.
function outcome(r) {
  if (r.status >= 200 && r.status < 300) return { ok: true };
  return { ok: false, error: `HTTP ${r.status}: ${(r.body ?? "").slice(0, 200)}` };
}

// Record how the attempt at `item` went and count it in `result`.
function settle(item, out, result) {
  const attempts = item.attempts + 1;
  const at = time.now();
  if (out.ok) {
    db.exec("UPDATE _hull_outbox SET state = 'delivered', attempts = ?, delivered_at = ?, last_error = NULL WHERE id = ?", [
      attempts,
      at,
      item.id,
    ]);
    result.delivered += 1;
  } else if (attempts >= item.max_attempts) {
    db.exec("UPDATE _hull_outbox SET state = 'failed', attempts = ?, last_error = ? WHERE id = ?", [
      attempts,
      out.error,
      item.id,
    ]);
    result.failed += 1;
  } else {
    const backoff = Math.min(2 ** attempts * 10, MAX_BACKOFF);
    db.exec("UPDATE _hull_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?", [
      attempts,
      at + backoff,
      out.error,
      item.id,
    ]);
    result.retried += 1;
  }
}

// Deliver the items that are due (at most opts.limit, default 50) →
// {delivered, failed, retried}. A failed attempt is retried after
// min(2^attempts * 10 s, 1 h); after maxAttempts the item is 'failed'.
function flush(opts = {}) {
  const result = { delivered: 0, failed: 0, retried: 0 };
  for (const item of claim(opts)) {
    const req = request(item);
    let out;
    if (req.error) {
      out = { ok: false, error: req.error };
    } else {
      try {
        out = outcome(http.post(...req.args));
      } catch (e) {
        out = { ok: false, error: e.message };
      }
    }
    settle(item, out, result);
  }
  return result;
}

// flush() without blocking the worker: the posts run off its thread.
async function flushAsync(opts = {}) {
  const result = { delivered: 0, failed: 0, retried: 0 };
  for (const item of claim(opts)) {
    const req = request(item);
    let out;
    if (req.error) {
      out = { ok: false, error: req.error };
    } else {
      try {
        out = outcome(await http.postAsync(...req.args));
      } catch (e) {
        out = { ok: false, error: e.message };
      }
    }
    settle(item, out, result);
  }
  return result;
}

// A middleware that marks the request (req.ctx._outbox_flush) for
// flushIfNeeded.
function middleware() {
  return (req) => {
    req.ctx._outbox_flush = true;
    return 0;
  };
}

// flush(opts) if the outbox middleware ran for `req`, else null.
function flushIfNeeded(req, opts) {
  return req.ctx._outbox_flush ? flush(opts) : null;
}

// Counts by state → {pending, delivered, failed}.
function stats() {
  ensure();
  const counts = { pending: 0, delivered: 0, failed: 0 };
  for (const row of db.query("SELECT state, COUNT(*) AS n FROM _hull_outbox GROUP BY state")) {
    counts[row.state] = row.n;
  }
  return counts;
}

// Items, newest first, for showing delivery status (app code cannot read
// _hull_outbox itself). filter: destination, state, kind, limit (50).
function list(filter = {}) {
  const where = [];
  const params = [];
  for (const column of ["destination", "state", "kind"]) {
    if (!blank(filter[column])) {
      where.push(`${column} = ?`);
      params.push(filter[column]);
    }
  }
  params.push(filter.limit !== undefined ? whole("outbox.list", "limit", filter.limit, 1) : 50);
  ensure();
  let sql =
    "SELECT id, kind, destination, payload, state, attempts, max_attempts, next_attempt_at, created_at, delivered_at, last_error FROM _hull_outbox";
  if (where.length > 0) sql += ` WHERE ${where.join(" AND ")}`;
  return db.query(`${sql} ORDER BY id DESC LIMIT ?`, params);
}

// Delete delivered items older than maxAge seconds (default 7 days) → how many.
function cleanup(maxAge = 604800) {
  whole("outbox.cleanup", "maxAge", maxAge, 0);
  ensure();
  return db.exec("DELETE FROM _hull_outbox WHERE state = 'delivered' AND delivered_at <= ?", [time.now() - maxAge]);
}

export const outbox = { init, enqueue, flush, flushAsync, middleware, flushIfNeeded, stats, list, cleanup };
