-- hull.middleware.logger: a request id and one logfmt line per request
-- (Hull §10.11). Register it first, as pre-body middleware:
--   app.use("*", "/*", logger.middleware({ skip = { "/health" } }))
--
-- Ids are Hull's: a counter in lowercase hex from 1. Hull kept the counter
-- in its single VM; Cove keeps it in the shared kv store, so no two
-- workers hand out the same id.

local kv = require("hull.kv")

local logger = {}

local COUNTER = "hull:logger:request_id"

-- The next request id ("1", "2", … "a", …), unique across the server's workers.
function logger.generate_id()
  return string.format("%x", kv.incr(COUNTER))
end

-- True if `path` is one of the exact paths in `list`.
function logger.should_skip(path, list)
  for _, p in ipairs(list or {}) do
    if p == path then
      return true
    end
  end
  return false
end

local ESCAPES = { ["\\"] = "\\\\", ['"'] = '\\"', ["\r"] = "\\r", ["\n"] = "\\n" }

local function logfmt_value(v)
  local s = tostring(v)
  local needs_quotes = s:find('[ ="\r\n]') ~= nil
  s = s:gsub('[\\"\r\n]', ESCAPES)
  if needs_quotes then
    return '"' .. s .. '"'
  end
  return s
end

-- `entries` is a list of {key, value} → `key=value key2="a b"` (logfmt).
function logger.format_line(entries)
  local parts = {}
  for i, e in ipairs(entries) do
    parts[i] = e[1] .. "=" .. logfmt_value(e[2])
  end
  return table.concat(parts, " ")
end

-- A middleware for `opts`: skip (exact paths to leave out), include_headers
-- (request header names to add to the line). Sets req.ctx.request_id and
-- the X-Request-ID response header; never stops the request.
function logger.middleware(opts)
  opts = opts or {}
  local skip = opts.skip or {}
  local include = {}
  for i, name in ipairs(opts.include_headers or {}) do
    include[i] = { name:lower(), (name:lower():gsub("-", "_")) }
  end

  return function(req, res)
    if logger.should_skip(req.path, skip) then
      return 0
    end
    local id = logger.generate_id()
    req.ctx.request_id = id
    res:header("X-Request-ID", id)
    -- Pre-body middleware has no body yet: its size is what the client announced.
    local entries = {
      { "method", req.method },
      { "path", req.path },
      { "req_id", id },
      { "body_in", tonumber(req.headers["content-length"]) or 0 },
    }
    for _, h in ipairs(include) do
      local v = req.headers[h[1]]
      if v then
        entries[#entries + 1] = { h[2], v }
      end
    end
    log.info("req " .. logger.format_line(entries))
    return 0
  end
end

return logger
