-- hull.middleware.outbox: the transactional outbox (Hull §10.14).
--
-- A handler enqueues outgoing messages in the same database transaction as
-- the change they announce (a webhook per new order, say); outbox.flush()
-- delivers what is due with http.post and retries failures with backoff.
-- Items live in the reserved table _hull_outbox, shared by every worker.
--
-- A flush claims its items in one UPDATE before sending: it pushes their
-- next attempt a lease into the future, so a flush running at the same time
-- on another worker (or, on PostgreSQL, another process) skips them, and an
-- item whose flush died mid-way is retried once the lease ends. In a
-- handler, the http calls suspend the handler (the worker serves other
-- requests meanwhile).

local dialect = require("hull.dialect")
local tables = require("hull._tables")

local outbox = {}

local max_attempts = 5 -- default per item; set by init
local ready = false -- the table exists (checked once per worker VM)

local LEASE = 300 -- seconds a claimed item stays hidden from other flushes
local MAX_BACKOFF = 3600 -- seconds
local DELIVERABLE = { webhook = true, http = true }

local function whole(where, name, value, min)
  if math.type(value) ~= "integer" or value < min then
    error(string.format("%s: %s must be a whole number >= %d, got %s",
      where, name, min, tostring(value)), 3)
  end
  return value
end

-- Create the table if needed; opts.max_attempts (default 5) is how often an
-- item is tried before it is marked failed.
function outbox.init(opts)
  opts = opts or {}
  if opts.max_attempts ~= nil then
    max_attempts = whole("outbox.init", "max_attempts", opts.max_attempts, 1)
  end
  tables.create([[CREATE TABLE IF NOT EXISTS _hull_outbox (
    id {id},
    kind TEXT NOT NULL,
    destination TEXT NOT NULL,
    payload TEXT NOT NULL,
    headers TEXT,
    idempotency_key TEXT,
    attempts {int} NOT NULL DEFAULT 0,
    max_attempts {int} NOT NULL DEFAULT 5,
    next_attempt_at {int} NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    created_at {int} NOT NULL,
    delivered_at {int},
    last_error TEXT)]])
  tables.create([[CREATE INDEX IF NOT EXISTS idx_hull_outbox_due
    ON _hull_outbox (state, next_attempt_at)]])
  tables.create([[CREATE INDEX IF NOT EXISTS idx_hull_outbox_destination
    ON _hull_outbox (destination, id)]])
  ready = true
end

local function ensure()
  if not ready then
    outbox.init()
  end
end

-- Add a message → its id. Fields: kind ("webhook" or "http" are delivered
-- by flush), destination (URL), payload (string; a table is JSON-encoded),
-- headers (table or JSON string), idempotency_key (sent as
-- Idempotency-Key), max_attempts, delay (seconds before the first attempt).
function outbox.enqueue(item)
  if type(item) ~= "table" then
    error("outbox.enqueue: expected a table {kind=, destination=, payload=}, got "
      .. type(item), 2)
  end
  for _, field in ipairs({ "kind", "destination", "payload" }) do
    if item[field] == nil or item[field] == "" then
      error("outbox.enqueue: " .. field .. " is required", 2)
    end
  end
  local payload, headers = item.payload, item.headers
  if type(payload) == "table" then
    payload = json.encode(payload)
  end
  if type(headers) == "table" then
    headers = json.encode(headers)
  end
  local attempts = item.max_attempts ~= nil
    and whole("outbox.enqueue", "max_attempts", item.max_attempts, 1) or max_attempts
  local delay = item.delay ~= nil and whole("outbox.enqueue", "delay", item.delay, 0) or 0
  ensure()
  local now = time.now()
  db.exec([[INSERT INTO _hull_outbox (kind, destination, payload, headers,
      idempotency_key, max_attempts, next_attempt_at, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)]],
    { item.kind, item.destination, payload, headers, item.idempotency_key,
      attempts, now + delay, now })
  return db.last_id()
end

-- Send one item → true, or false and why not.
local function deliver(item)
  if not DELIVERABLE[item.kind] then
    return false, "unsupported outbox kind: " .. item.kind
  end
  local headers = {}
  local ok, decoded = pcall(json.decode, item.headers or "")
  if ok and type(decoded) == "table" then
    headers = decoded
  end
  if item.idempotency_key ~= nil then
    local given = false
    for name in pairs(headers) do
      given = given or string.lower(name) == "idempotency-key"
    end
    if not given then
      headers["Idempotency-Key"] = item.idempotency_key
    end
  end
  local sent, r = pcall(http.post, item.destination, item.payload, { headers = headers })
  if not sent then
    return false, tostring(r)
  end
  if r.status >= 200 and r.status < 300 then
    return true
  end
  return false, "HTTP " .. r.status .. ": " .. string.sub(r.body or "", 1, 200)
end

-- Deliver the items that are due (at most opts.limit, default 50) →
-- {delivered, failed, retried}. A failed attempt is retried after
-- min(2^attempts * 10 s, 1 h); after max_attempts the item is 'failed'.
function outbox.flush(opts)
  opts = opts or {}
  local limit = opts.limit ~= nil and whole("outbox.flush", "limit", opts.limit, 1) or 50
  ensure()
  local now = time.now()
  local items = db.query(dialect.sql([[UPDATE _hull_outbox SET next_attempt_at = ?
    WHERE id IN (SELECT id FROM _hull_outbox
      WHERE state = 'pending' AND next_attempt_at <= ?
      ORDER BY next_attempt_at, id LIMIT ? {lock})
    RETURNING id, kind, destination, payload, headers, idempotency_key,
      attempts, max_attempts]]), { now + LEASE, now, limit })
  table.sort(items, function(a, b) return a.id < b.id end)
  local result = { delivered = 0, failed = 0, retried = 0 }
  for _, item in ipairs(items) do
    local ok, err = deliver(item)
    local attempts = item.attempts + 1
    local at = time.now()
    if ok then
      db.exec("UPDATE _hull_outbox SET state = 'delivered', attempts = ?, delivered_at = ?, "
        .. "last_error = NULL WHERE id = ?", { attempts, at, item.id })
      result.delivered = result.delivered + 1
    elseif attempts >= item.max_attempts then
      db.exec("UPDATE _hull_outbox SET state = 'failed', attempts = ?, last_error = ? "
        .. "WHERE id = ?", { attempts, err, item.id })
      result.failed = result.failed + 1
    else
      local backoff = math.min(10 << math.min(attempts, 9), MAX_BACKOFF)
      db.exec("UPDATE _hull_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? "
        .. "WHERE id = ?", { attempts, at + backoff, err, item.id })
      result.retried = result.retried + 1
    end
  end
  return result
end

-- A middleware that marks the request (req.ctx._outbox_flush) for
-- outbox.flush_if_needed.
function outbox.middleware()
  return function(req)
    req.ctx._outbox_flush = true
    return 0
  end
end

-- outbox.flush(opts) if the outbox middleware ran for `req`, else nil.
function outbox.flush_if_needed(req, opts)
  if req.ctx._outbox_flush then
    return outbox.flush(opts)
  end
  return nil
end

-- Counts by state → {pending, delivered, failed}.
function outbox.stats()
  ensure()
  local counts = { pending = 0, delivered = 0, failed = 0 }
  for _, row in ipairs(db.query("SELECT state, COUNT(*) AS n FROM _hull_outbox GROUP BY state")) do
    counts[row.state] = row.n
  end
  return counts
end

-- Items, newest first, for showing delivery status (app code cannot read
-- _hull_outbox itself). filter: destination, state, kind, limit (50).
function outbox.list(filter)
  filter = filter or {}
  local where, params = {}, {}
  for _, column in ipairs({ "destination", "state", "kind" }) do
    if filter[column] ~= nil then
      where[#where + 1] = column .. " = ?"
      params[#params + 1] = filter[column]
    end
  end
  params[#params + 1] = filter.limit ~= nil
    and whole("outbox.list", "limit", filter.limit, 1) or 50
  ensure()
  local sql = "SELECT id, kind, destination, payload, state, attempts, max_attempts, "
    .. "next_attempt_at, created_at, delivered_at, last_error FROM _hull_outbox"
  if #where > 0 then
    sql = sql .. " WHERE " .. table.concat(where, " AND ")
  end
  -- Not a tail call: db.* knows stdlib code by the calling frame.
  local rows = db.query(sql .. " ORDER BY id DESC LIMIT ?", params)
  return rows
end

-- Delete delivered items older than max_age seconds (default 7 days) →
-- how many.
function outbox.cleanup(max_age)
  max_age = max_age ~= nil and whole("outbox.cleanup", "max_age", max_age, 0) or 604800
  ensure()
  -- Not a tail call: db.* knows stdlib code by the calling frame.
  local deleted = db.exec("DELETE FROM _hull_outbox WHERE state = 'delivered' AND delivered_at <= ?",
    { time.now() - max_age })
  return deleted
end

return outbox
