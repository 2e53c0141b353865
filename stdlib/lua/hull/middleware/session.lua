-- hull.middleware.session: server-side sessions in the database (Hull §10.4).
--
-- Rows live in the reserved table _hull_sessions, so every worker (and
-- every restart) sees the same sessions. Loading a session slides its
-- expiry. The table is created by session.init() or, if the app never
-- calls it, on first use with the default ttl.

local tables = require("hull._tables")

local session = {}

local ttl = 86400 -- seconds; set by init
local ready = false -- the table exists (checked once per worker VM)


local function hex(bytes)
  return (bytes:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

-- Create the table and index if needed; opts.ttl (seconds, default 86400)
-- is how long a session lives after its last use.
function session.init(opts)
  opts = opts or {}
  if opts.ttl ~= nil then
    if math.type(opts.ttl) ~= "integer" or opts.ttl < 1 then
      error("session.init: opts.ttl must be a positive whole number of seconds, got "
        .. tostring(opts.ttl), 2)
    end
    ttl = opts.ttl
  end
  tables.create([[CREATE TABLE IF NOT EXISTS _hull_sessions (
    id TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    created_at {int} NOT NULL,
    last_accessed {int} NOT NULL,
    expires_at {int} NOT NULL)]])
  tables.create("CREATE INDEX IF NOT EXISTS idx__hull_sessions_expires ON _hull_sessions (expires_at)")
  ready = true
end

local function ensure()
  if not ready then
    session.init()
  end
end

-- Store `data` (a JSON-encodable table) in a new session → its id
-- (64 lowercase hex characters from 32 random bytes).
function session.create(data)
  ensure()
  local id = hex(crypto.random(32))
  local now = time.now()
  db.exec("INSERT INTO _hull_sessions (id, data, created_at, last_accessed, expires_at) "
    .. "VALUES (?, ?, ?, ?, ?)", { id, json.encode(data or {}), now, now, now + ttl })
  return id
end

-- The data of session `id`, or nil if it does not exist or has expired
-- (an expired row is deleted). A live session's expiry slides to now + ttl.
function session.load(id)
  if type(id) ~= "string" or id == "" then
    return nil
  end
  ensure()
  local row = db.query(
    "SELECT data, last_accessed, expires_at FROM _hull_sessions WHERE id = ?", { id })[1]
  if not row then
    return nil
  end
  local now = time.now()
  if row.expires_at <= now then
    db.exec("DELETE FROM _hull_sessions WHERE id = ?", { id })
    return nil
  end
  -- Times are in seconds: a second request within the same second would
  -- write the same values, so skip the write.
  if row.last_accessed < now then
    db.exec("UPDATE _hull_sessions SET last_accessed = ?, expires_at = ? WHERE id = ?",
      { now, now + ttl, id })
  end
  return json.decode(row.data)
end

-- Replace the data of a live session and slide its expiry → true, or false
-- if there is no such live session.
function session.update(id, data)
  ensure()
  local now = time.now()
  return db.exec("UPDATE _hull_sessions SET data = ?, last_accessed = ?, expires_at = ? "
    .. "WHERE id = ? AND expires_at > ?", { json.encode(data or {}), now, now + ttl, id, now }) > 0
end

-- Delete session `id` → true if it existed.
function session.destroy(id)
  ensure()
  return db.exec("DELETE FROM _hull_sessions WHERE id = ?", { id }) > 0
end

-- Delete every expired session → how many.
function session.cleanup()
  ensure()
  -- Not a tail call: db.* recognises the stdlib by the calling frame,
  -- which a tail call would remove.
  local removed = db.exec("DELETE FROM _hull_sessions WHERE expires_at <= ?", { time.now() })
  return removed
end

return session
