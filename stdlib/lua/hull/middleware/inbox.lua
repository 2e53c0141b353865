-- hull.middleware.inbox: remembers processed message ids so a message
-- delivered twice (webhook retries) is handled once (Hull §10.15).
--
-- Ids live in the reserved table _hull_inbox_processed, per source, for a
-- ttl. check_and_mark is one INSERT, so two workers receiving the same
-- message at once agree on which of them handles it.

local tables = require("hull._tables")

local inbox = {}

local ttl = 604800 -- seconds an id is remembered (7 days); set by init
local ready = false -- the table exists (checked once per worker VM)


local function check_ttl(where, value)
  if math.type(value) ~= "integer" or value < 1 then
    error(where .. ": ttl must be a positive whole number of seconds, got "
      .. tostring(value), 3)
  end
  return value
end

-- Create the table if needed; opts.ttl (seconds, default 604800).
function inbox.init(opts)
  opts = opts or {}
  if opts.ttl ~= nil then
    ttl = check_ttl("inbox.init", opts.ttl)
  end
  tables.create([[CREATE TABLE IF NOT EXISTS _hull_inbox_processed (
    message_id TEXT NOT NULL,
    source TEXT NOT NULL,
    processed_at {int} NOT NULL,
    expires_at {int} NOT NULL,
    PRIMARY KEY (source, message_id))]])
  tables.create([[CREATE INDEX IF NOT EXISTS idx_hull_inbox_expires
    ON _hull_inbox_processed (expires_at)]])
  ready = true
end

local function ensure()
  if not ready then
    inbox.init()
  end
end

local function usable(id)
  return (type(id) == "string" and id ~= "") or math.type(id) == "integer"
end

-- Whether message `id` from `source` (default "default") was processed and
-- has not expired.
function inbox.is_duplicate(id, source)
  if not usable(id) then
    return false
  end
  ensure()
  local now = time.now()
  local row = db.query("SELECT expires_at FROM _hull_inbox_processed "
    .. "WHERE source = ? AND message_id = ?", { source or "default", tostring(id) })[1]
  if row == nil then
    return false
  end
  if row.expires_at <= now then
    db.exec("DELETE FROM _hull_inbox_processed WHERE source = ? AND message_id = ?",
      { source or "default", tostring(id) })
    return false
  end
  return true
end

-- Record message `id` from `source` as processed (opts.ttl overrides the
-- ttl for this id).
function inbox.mark_processed(id, source, opts)
  if not usable(id) then
    error("inbox.mark_processed: id must be a non-empty string, got " .. tostring(id), 2)
  end
  local id_ttl = (opts and opts.ttl ~= nil) and check_ttl("inbox.mark_processed", opts.ttl) or ttl
  ensure()
  local now = time.now()
  db.exec([[INSERT INTO _hull_inbox_processed
      (message_id, source, processed_at, expires_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (source, message_id) DO UPDATE SET
      processed_at = excluded.processed_at, expires_at = excluded.expires_at]],
    { tostring(id), source or "default", now, now + id_ttl })
end

-- true if `id` was already processed; else marks it and returns false.
-- Atomic: of concurrent calls with one id, exactly one returns false.
function inbox.check_and_mark(id, source, opts)
  if not usable(id) then
    return false
  end
  local id_ttl = (opts and opts.ttl ~= nil) and check_ttl("inbox.check_and_mark", opts.ttl) or ttl
  ensure()
  local now = time.now()
  -- Inserts a new id or takes over an expired one; a live one is left alone.
  local marked = db.exec([[INSERT INTO _hull_inbox_processed
      (message_id, source, processed_at, expires_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (source, message_id) DO UPDATE SET
      processed_at = excluded.processed_at, expires_at = excluded.expires_at
    WHERE _hull_inbox_processed.expires_at <= excluded.processed_at]],
    { tostring(id), source or "default", now, now + id_ttl })
  return marked == 0
end

-- Delete expired ids → how many.
function inbox.cleanup()
  ensure()
  -- Not a tail call: db.* knows stdlib code by the calling frame.
  local deleted = db.exec("DELETE FROM _hull_inbox_processed WHERE expires_at <= ?", { time.now() })
  return deleted
end

return inbox
