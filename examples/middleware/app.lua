-- middleware: request ids and logging, a rate limit and CORS on /api/*,
-- all from the stdlib, plus a request counter of the app's own.
--
--   cove -p 8080 examples/middleware/app.lua
--   curl -i localhost:8080/api/items
--   curl -i -X OPTIONS -H 'Origin: http://localhost:5173' localhost:8080/api/items
--
-- Pre-body middleware runs in the order it is registered, for every
-- request whose path matches (also when no route does).

local logger = require("hull.middleware.logger")
local ratelimit = require("hull.middleware.ratelimit")
local cors = require("hull.middleware.cors")
local kv = require("hull.kv")

-- 1. An id per request (req.ctx.request_id and the X-Request-ID header)
--    and one log line: `req method=GET path=/api/items req_id=3 body_in=0`.
app.use("*", "/*", logger.middleware({ skip = { "/health" } }))

-- 2. Count requests. Each worker has its own Lua VM, so a module-level
--    counter would count per worker; the kv store is one for the server.
app.use("*", "/*", function(req, res)
  kv.incr("total_requests")
  return 0
end)

-- 3. CORS for the browser front end (a dev server on 5173 or 3001). It
--    comes before the rate limit: preflights are answered without using
--    up the limit, and a 429 still carries the CORS headers a browser
--    needs to show it to the page.
app.use("*", "/api/*", cors.middleware({
  origins = { "http://localhost:5173", "http://localhost:3001" },
}))

-- 4. 60 requests a minute to /api/*, counted for all clients together
--    (and across all workers).
app.use("*", "/api/*", ratelimit.middleware({ limit = 60, window = 60 }))

-- A preflight from an allowed origin is answered by the CORS middleware;
-- this route answers the others.
app.options("/api/items", function(req, res)
  res:status(204)
end)

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.get("/", function(req, res)
  res:json({ message = "Middleware example", request_id = req.ctx.request_id })
end)

app.get("/api/items", function(req, res)
  res:json({ items = { "apple", "banana", "cherry" }, request_id = req.ctx.request_id })
end)

app.post("/api/items", function(req, res)
  local ok, item = pcall(json.decode, req.body)
  if not ok or item == nil then
    return res:json({ error = "invalid JSON" }, 400)
  end
  res:json({ created = item, request_id = req.ctx.request_id }, 201)
end)

app.get("/api/debug", function(req, res)
  res:json({ request_id = req.ctx.request_id, total_requests = kv.get("total_requests") or 0 })
end)
