-- Cove's Lua prelude. Raw Rust functions return `ok, result`; the wrappers
-- here raise failures as plain strings positioned at the caller (so apps can
-- match on them after pcall), and stop pcall from swallowing the
-- instruction-budget error.
local raw = ...
local error, pack, unpack = error, table.pack, table.unpack
local raw_pcall, raw_xpcall = pcall, xpcall
local setmetatable = setmetatable
local over_budget = raw.over_budget

local function wrap(f)
  return function(...)
    local ok, r = f(...)
    if ok then
      return r
    end
    error(r, 2)
  end
end

local function checked(...)
  over_budget()
  return ...
end

pcall = function(...) return checked(raw_pcall(...)) end
xpcall = function(...) return checked(raw_xpcall(...)) end

-- Coroutines run through Cove's resume, which tells the instruction budget
-- which Lua thread runs (budget.rs); otherwise they are Lua's own.
local resume = raw.co_resume
coroutine.resume = function(...) return checked(resume(...)) end
coroutine.wrap = raw.co_wrap

-- `db.query/exec/last_id` are the capability table's (caps.rs).
-- "sqlite" or "postgres": for SQL that cannot be written portably.
db.dialect = raw.db_dialect
db.batch = function(fn)
  local ok, e = raw.db_begin()
  if not ok then
    error(e, 2)
  end
  local res = pack(raw_pcall(fn))
  if not res[1] then
    raw.db_rollback()
    error(res[2], 0)
  end
  ok, e = raw.db_commit()
  if not ok then
    error(e, 2)
  end
  return unpack(res, 2, res.n)
end

require = wrap(raw.require)

-- `res`: one object per worker; its native methods build the response of
-- the call in progress and raise failures at the caller's line.
local res = raw.res

-- `req.method`, `req.path`, `req.query`, `req.params`, `req.headers` and
-- `req.ctx` come from `req_meta.__index` (req.rs), from the request of
-- the call in progress: `current[1]`, set here for each call (by the
-- engine for a request's only call, which skips `dispatch`) and by the
-- engine when it resumes a suspended one. A table slot, not an upvalue: storing a new
-- table in an (old) upvalue makes it old at once under the generational
-- GC, and every request's tables would then wait for a major collection.
-- `req.ctx` then stays in the req table that every call of the request
-- shares. `pairs(req)` first sets them all (but `ctx`), as Hull's plain
-- table has them.
local current, fill, next = {}, raw.req_fill, next
local req_meta = {
  -- __index: set by the engine (req.rs).
  __pairs = function(t)
    fill(t)
    return next, t, nil
  end,
}

-- The engine calls this for every handler and middleware, with the req
-- table it made on the request's first call (`req_meta` is its metatable);
-- when more calls follow (`keep`), the table is handed back. A request's
-- only call runs its handler without it (coroutine.rs `dispatch_only`).
local function dispatch(handler, req, keep)
  current[1] = req
  if keep then
    return handler(req, res), req
  end
  return (handler(req, res))
end

-- The dispatcher of a WebSocket endpoint's handlers (`app.ws(pattern,
-- {open=, message=, close=})`, the capability table's, which checks them
-- and registers what this makes of them; ws.rs). The engine calls it for
-- each event of a connection, with the upgrade request's req for `open`
-- (so `req.ctx` holds what middleware put there); the connection's `ws`
-- table lives from `open` to `close`, on the worker that holds the
-- connection.
do
  local ws_event = raw.ws_event
  local ws_meta = { __index = raw.ws_methods }
  local sockets = {}
  raw.ws_dispatcher(function(handlers)
    local open, message, close = handlers.open, handlers.message, handlers.close
    return function(req)
      local id, kind, a, b = ws_event()
      if kind == "message" then
        if message then
          return message(sockets[id], a, b)
        end
      elseif kind == "open" then
        local ws = setmetatable({ id = id, ctx = req.ctx }, ws_meta)
        sockets[id] = ws
        if open then
          return open(ws, req)
        end
      elseif kind == "close" then
        local ws = sockets[id]
        sockets[id] = nil
        if close and ws then
          return close(ws, a, b)
        end
      end
    end
  end)
end

return dispatch, current, req_meta, res
