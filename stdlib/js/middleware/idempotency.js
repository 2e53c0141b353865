// hull:middleware:idempotency — Idempotency-Key handling (Hull §10.13).
//
// A client that retries a POST with the same Idempotency-Key gets the first
// response again instead of running the operation twice. Keys live in the
// reserved table _hull_idempotency_keys, so every worker sees them:
//
//   * the middleware claims a key by inserting an 'inflight' row; the
//     primary key makes that insert the lock, so of two concurrent requests
//     with one key (on any workers) exactly one runs, the other gets 409;
//   * idempotency.respond() sends the handler's JSON response and stores it
//     with the row ('complete'); later requests with the key replay it.

import { db } from "hull:db";
import { dialect } from "hull:dialect";
import { tables } from "hull:_tables";
import { crypto } from "hull:crypto";
import { time } from "hull:time";

let ttl = 86400; // seconds a key is remembered; set by init
let ready = false; // the table exists (checked once per worker VM)
let calls = 0; // middleware calls in this VM, to purge now and then

const DIFFERENT = "idempotency key already used with different request body";
const IN_PROGRESS = "request with this idempotency key is already in progress";
const NOT_CACHED = "request with this idempotency key was already processed";

function checkTtl(where, value) {
  if (!Number.isInteger(value) || value < 1) {
    throw new TypeError(`${where}: ttl must be a positive whole number of seconds, got ${value}`);
  }
  return value;
}

// Create the table if needed; opts.ttl (seconds, default 86400) is how long
// a key and its response are kept.
function init(opts = {}) {
  if (opts.ttl !== undefined) ttl = checkTtl("idempotency.init", opts.ttl);
  const t = dialect.words();
  tables.create(`CREATE TABLE IF NOT EXISTS _hull_idempotency_keys (
    key TEXT NOT NULL,
    principal_id TEXT NOT NULL DEFAULT '__anon',
    fingerprint TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status ${t.int},
    response_body TEXT,
    response_headers TEXT,
    state TEXT NOT NULL DEFAULT 'inflight',
    created_at ${t.int} NOT NULL,
    expires_at ${t.int} NOT NULL,
    PRIMARY KEY (principal_id, key))`);
  tables.create("CREATE INDEX IF NOT EXISTS idx_hull_idem_expires ON _hull_idempotency_keys (expires_at)");
  ready = true;
}

function ensure() {
  if (!ready) init();
}

function defaultPrincipal(req) {
  const userId = req.ctx?.session?.user_id;
  return userId === undefined || userId === null ? "__anon" : String(userId);
}

// Claim (principal, key) for this request: true if it is ours now. An
// expired row is taken over in the same statement.
function claim(principal, key, fingerprint, endpoint, keyTtl) {
  const now = time.now();
  const changed = db.exec(
    `INSERT INTO _hull_idempotency_keys
       (key, principal_id, fingerprint, endpoint, state, created_at, expires_at)
     VALUES (?, ?, ?, ?, 'inflight', ?, ?)
     ON CONFLICT (principal_id, key) DO UPDATE SET
       fingerprint = excluded.fingerprint, endpoint = excluded.endpoint,
       status = NULL, response_body = NULL, response_headers = NULL,
       state = 'inflight', created_at = excluded.created_at,
       expires_at = excluded.expires_at
     WHERE _hull_idempotency_keys.expires_at <= excluded.created_at`,
    [key, principal, fingerprint, endpoint, now, now + keyTtl],
  );
  return changed === 1;
}

// Send the stored response of a completed request again.
function replay(res, row) {
  res.status(row.status);
  let headers = {};
  try {
    headers = JSON.parse(row.response_headers ?? "{}") ?? {};
  } catch {
    // Unreadable extra headers: replay without them.
  }
  for (const [name, value] of Object.entries(headers)) res.header(name, String(value));
  res.header("X-Idempotency-Replay", "true");
  // An explicit Content-Type wins over res.text's, so the replay carries
  // one Content-Type (Hull sent two).
  res.header("Content-Type", "application/json");
  res.text(row.response_body ?? "");
}

// The middleware (register with app.usePost). Options: `ttl` (seconds),
// `headerName` (default "idempotency-key"), `methods` (default ["POST"]),
// `getPrincipal(req)` → the id keys are scoped to (default: the session's
// user_id, else "__anon").
function middleware(opts = {}) {
  const keyTtl = opts.ttl !== undefined ? checkTtl("idempotency.middleware", opts.ttl) : undefined;
  const header = (opts.headerName ?? "idempotency-key").toLowerCase();
  const methods = new Set((opts.methods ?? ["POST"]).map((m) => m.toUpperCase()));
  const principalOf = opts.getPrincipal ?? defaultPrincipal;
  return (req, res) => {
    if (!methods.has(req.method)) return 0;
    const key = req.headers[header];
    if (key === undefined || key === "") return 0;
    ensure();
    calls += 1;
    if (calls % 100 === 0) cleanup();
    const principal = String(principalOf(req) ?? "__anon");
    const fingerprint = crypto.sha256(`${req.method}\0${req.path}\0${req.body ?? ""}`);
    if (claim(principal, key, fingerprint, `${req.method} ${req.path}`, keyTtl ?? ttl)) {
      req.ctx._idem_key = key;
      req.ctx._idem_principal = principal;
      return 0;
    }
    const [row] = db.query(
      `SELECT fingerprint, state, status, response_body, response_headers
       FROM _hull_idempotency_keys WHERE principal_id = ? AND key = ?`,
      [principal, key],
    );
    if (!row) {
      // Expired and purged between the two statements: the retry claims it.
      res.json({ error: IN_PROGRESS }, 409);
    } else if (row.fingerprint !== fingerprint) {
      res.json({ error: DIFFERENT }, 409);
    } else if (row.state === "inflight") {
      res.json({ error: IN_PROGRESS }, 409);
    } else if (row.status === null) {
      // Completed with idempotency.complete(): nothing to replay, and
      // running it again is what the key is there to prevent.
      res.json({ error: NOT_CACHED }, 409);
    } else {
      replay(res, row);
    }
    return 1;
  };
}

// Respond with `data` as JSON (status, optional extra headers) and, when
// the request holds a key, store the response for replays.
function respond(req, res, status, data, extraHeaders = {}) {
  res.status(status);
  for (const [name, value] of Object.entries(extraHeaders ?? {})) res.header(name, String(value));
  res.json(data);
  const key = req.ctx._idem_key;
  if (key !== undefined) {
    db.exec(
      `UPDATE _hull_idempotency_keys
       SET state = 'complete', status = ?, response_body = ?, response_headers = ?
       WHERE principal_id = ? AND key = ?`,
      [status, JSON.stringify(data) ?? "null", JSON.stringify(extraHeaders ?? {}), req.ctx._idem_principal, key],
    );
  }
}

// Mark the request's key complete without storing a response (for
// handlers that answer with something other than idempotency.respond).
function complete(req) {
  const key = req.ctx._idem_key;
  if (key !== undefined) {
    db.exec("UPDATE _hull_idempotency_keys SET state = 'complete' WHERE principal_id = ? AND key = ?", [
      req.ctx._idem_principal,
      key,
    ]);
  }
}

// Delete expired keys → how many.
function cleanup() {
  ensure();
  return db.exec("DELETE FROM _hull_idempotency_keys WHERE expires_at <= ?", [time.now()]);
}

export const idempotency = { init, middleware, respond, complete, cleanup };
