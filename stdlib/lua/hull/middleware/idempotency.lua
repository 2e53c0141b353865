-- hull.middleware.idempotency: Idempotency-Key handling (Hull §10.13).
--
-- A client that retries a POST with the same Idempotency-Key gets the first
-- response again instead of running the operation twice. Keys live in the
-- reserved table _hull_idempotency_keys, so every worker sees them:
--
--   * the middleware claims a key by inserting an 'inflight' row; the
--     primary key makes that insert the lock, so of two concurrent requests
--     with one key (on any workers) exactly one runs, the other gets 409;
--   * idempotency.respond() sends the handler's JSON response and stores it
--     with the row ('complete'); later requests with the key replay it.

local tables = require("hull._tables")

local idempotency = {}

local ttl = 86400 -- seconds a key is remembered; set by init
local ready = false -- the table exists (checked once per worker VM)
local calls = 0 -- middleware calls in this VM, to purge now and then

local DIFFERENT = "idempotency key already used with different request body"
local IN_PROGRESS = "request with this idempotency key is already in progress"
local NOT_CACHED = "request with this idempotency key was already processed"


local function check_ttl(where, value)
  if math.type(value) ~= "integer" or value < 1 then
    error(where .. ": ttl must be a positive whole number of seconds, got "
      .. tostring(value), 3)
  end
  return value
end

-- Create the table if needed; opts.ttl (seconds, default 86400) is how long
-- a key and its response are kept.
function idempotency.init(opts)
  opts = opts or {}
  if opts.ttl ~= nil then
    ttl = check_ttl("idempotency.init", opts.ttl)
  end
  tables.create([[CREATE TABLE IF NOT EXISTS _hull_idempotency_keys (
    key TEXT NOT NULL,
    principal_id TEXT NOT NULL DEFAULT '__anon',
    fingerprint TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status {int},
    response_body TEXT,
    response_headers TEXT,
    state TEXT NOT NULL DEFAULT 'inflight',
    created_at {int} NOT NULL,
    expires_at {int} NOT NULL,
    PRIMARY KEY (principal_id, key))]])
  tables.create([[CREATE INDEX IF NOT EXISTS idx_hull_idem_expires
    ON _hull_idempotency_keys (expires_at)]])
  ready = true
end

local function ensure()
  if not ready then
    idempotency.init()
  end
end

local function default_principal(req)
  local s = req.ctx.session
  if type(s) == "table" and s.user_id ~= nil then
    return tostring(s.user_id)
  end
  return "__anon"
end

-- Claim (principal, key) for this request: true if it is ours now. An
-- expired row is taken over in the same statement.
local function claim(principal, key, fingerprint, endpoint, key_ttl)
  local now = time.now()
  return db.exec([[INSERT INTO _hull_idempotency_keys
      (key, principal_id, fingerprint, endpoint, state, created_at, expires_at)
    VALUES (?, ?, ?, ?, 'inflight', ?, ?)
    ON CONFLICT (principal_id, key) DO UPDATE SET
      fingerprint = excluded.fingerprint, endpoint = excluded.endpoint,
      status = NULL, response_body = NULL, response_headers = NULL,
      state = 'inflight', created_at = excluded.created_at,
      expires_at = excluded.expires_at
    WHERE _hull_idempotency_keys.expires_at <= excluded.created_at]],
    { key, principal, fingerprint, endpoint, now, now + key_ttl }) == 1
end

-- Send the stored response of a completed request again.
local function replay(res, row)
  res:status(row.status)
  local ok, headers = pcall(json.decode, row.response_headers or "")
  if ok and type(headers) == "table" then
    for name, value in pairs(headers) do
      res:header(name, tostring(value))
    end
  end
  res:header("X-Idempotency-Replay", "true")
  -- An explicit Content-Type wins over res:text's, so the replay carries
  -- one Content-Type (Hull sent two).
  res:header("Content-Type", "application/json")
  res:text(row.response_body or "")
end

-- The middleware (register with app.use_post). Options: `ttl` (seconds),
-- `header_name` (default "idempotency-key"), `methods` (default {"POST"}),
-- `get_principal(req)` → the id keys are scoped to (default: the session's
-- user_id, else "__anon").
function idempotency.middleware(opts)
  opts = opts or {}
  local key_ttl = opts.ttl ~= nil and check_ttl("idempotency.middleware", opts.ttl) or nil
  local header = string.lower(opts.header_name or "idempotency-key")
  local methods = {}
  for _, m in ipairs(opts.methods or { "POST" }) do
    methods[string.upper(m)] = true
  end
  local principal_of = opts.get_principal or default_principal
  return function(req, res)
    if not methods[req.method] then
      return 0
    end
    local key = req.headers[header]
    if key == nil or key == "" then
      return 0
    end
    ensure()
    calls = calls + 1
    if calls % 100 == 0 then
      idempotency.cleanup()
    end
    local principal = tostring(principal_of(req) or "__anon")
    local fingerprint = crypto.sha256(req.method .. "\0" .. req.path .. "\0" .. (req.body or ""))
    if claim(principal, key, fingerprint, req.method .. " " .. req.path, key_ttl or ttl) then
      req.ctx._idem_key = key
      req.ctx._idem_principal = principal
      return 0
    end
    local row = db.query([[SELECT fingerprint, state, status, response_body, response_headers
      FROM _hull_idempotency_keys WHERE principal_id = ? AND key = ?]], { principal, key })[1]
    if row == nil then
      -- Expired and purged between the two statements: the retry claims it.
      res:json({ error = IN_PROGRESS }, 409)
    elseif row.fingerprint ~= fingerprint then
      res:json({ error = DIFFERENT }, 409)
    elseif row.state == "inflight" then
      res:json({ error = IN_PROGRESS }, 409)
    elseif row.status == nil then
      -- Completed with idempotency.complete(): nothing to replay, and
      -- running it again is what the key is there to prevent.
      res:json({ error = NOT_CACHED }, 409)
    else
      replay(res, row)
    end
    return 1
  end
end

-- Respond with `data` as JSON (status, optional extra headers) and, when
-- the request holds a key, store the response for replays.
function idempotency.respond(req, res, status, data, extra_headers)
  res:status(status)
  for name, value in pairs(extra_headers or {}) do
    res:header(name, tostring(value))
  end
  res:json(data)
  local key = req.ctx._idem_key
  if key ~= nil then
    db.exec([[UPDATE _hull_idempotency_keys
      SET state = 'complete', status = ?, response_body = ?, response_headers = ?
      WHERE principal_id = ? AND key = ?]],
      { status, json.encode(data), json.encode(extra_headers or {}),
        req.ctx._idem_principal, key })
  end
end

-- Mark the request's key complete without storing a response (for
-- handlers that answer with something other than idempotency.respond).
function idempotency.complete(req)
  local key = req.ctx._idem_key
  if key ~= nil then
    db.exec("UPDATE _hull_idempotency_keys SET state = 'complete' "
      .. "WHERE principal_id = ? AND key = ?", { req.ctx._idem_principal, key })
  end
end

-- Delete expired keys → how many.
function idempotency.cleanup()
  ensure()
  -- Not a tail call: db.* knows stdlib code by the calling frame.
  local deleted = db.exec("DELETE FROM _hull_idempotency_keys WHERE expires_at <= ?", { time.now() })
  return deleted
end

return idempotency
