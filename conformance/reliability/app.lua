-- The reliability stdlib (idempotency, outbox, inbox, email) for
-- conformance/specs/stdlib_reliability*.toml; app.js is its twin.
--
-- Outbound calls go to this server itself (127.0.0.1:<port>, the port
-- comes from the spec) or to a closed port. The server under test has one
-- worker, so a Lua handler may only post to itself once it suspends on
-- slow calls, which it does from its second call on: each spec file makes
-- a failing call through a route before one that reaches the server.

app.manifest({ hosts = { "127.0.0.1" } })

local idempotency = require("hull.middleware.idempotency")
local outbox = require("hull.middleware.outbox")
local inbox = require("hull.middleware.inbox")
local email = require("hull.email")

idempotency.init()
outbox.init({ max_attempts = 2 })
inbox.init()

local function body_of(req)
  local ok, data = pcall(json.decode, req.body or "")
  return ok and data or nil
end

-- Idempotency ---------------------------------------------------------------

-- X-User stands in for a login: keys are scoped to the session's user_id.
app.use("POST", "/idem/*", function(req)
  if req.headers["x-user"] then
    req.ctx.session = { user_id = tonumber(req.headers["x-user"]) }
  end
  return 0
end)
app.use_post("POST", "/idem/*", idempotency.middleware())

local function new_order(req)
  db.exec("INSERT INTO orders (body) VALUES (?)", { req.body or "" })
  return db.last_id()
end

app.post("/idem/orders", function(req, res)
  local id = new_order(req)
  idempotency.respond(req, res, 201, { order = id, item = (body_of(req) or {}).item },
    { ["X-Order"] = tostring(id) })
end)

-- Answers without idempotency.respond: the key stays in flight.
app.post("/idem/unfinished", function(req, res)
  res:json({ order = new_order(req) })
end)

-- Marks the key complete without a stored response.
app.post("/idem/plain", function(req, res)
  new_order(req)
  idempotency.complete(req)
  res:text("done")
end)

-- Keys that live two seconds (the expiry test in tests/examples_reliability.rs).
app.use_post("POST", "/short/*", idempotency.middleware({ ttl = 2 }))
app.post("/short/orders", function(req, res)
  idempotency.respond(req, res, 201, { order = new_order(req) })
end)

app.get("/idem/cleanup", function(req, res)
  res:json({ deleted = idempotency.cleanup() })
end)

-- Outbox ------------------------------------------------------------------

app.post("/outbox/enqueue", function(req, res)
  res:json({ id = outbox.enqueue(body_of(req)) })
end)

-- ?async=1 is for app.js (flushAsync); Lua's flush suspends by itself.
app.post("/outbox/flush", function(req, res)
  res:json(outbox.flush())
end)

app.get("/outbox/stats", function(req, res)
  res:json(outbox.stats())
end)

app.get("/outbox/list", function(req, res)
  local rows = {}
  for i, item in ipairs(outbox.list({ destination = req.query.destination, state = req.query.state })) do
    rows[i] = { id = item.id, state = item.state, attempts = item.attempts,
      last_error = item.last_error or "" }
  end
  res:json(rows)
end)

app.get("/outbox/cleanup", function(req, res)
  res:json({ deleted = outbox.cleanup(0) })
end)

-- Receivers ---------------------------------------------------------------

local RECORDED = { "content-type", "x-sig", "idempotency-key", "x-postmark-server-token",
  "authorization" }

-- Records the request; ?status= picks the answer.
app.post("/receive/:name", function(req, res)
  local seen = {}
  for _, name in ipairs(RECORDED) do
    seen[name] = req.headers[name]
  end
  db.exec("INSERT INTO received (path, body, headers) VALUES (?, ?, ?)",
    { req.params.name, req.body, json.encode(seen) })
  res:status(tonumber(req.query.status) or 200)
  res:text(req.query.say or "ok")
end)

-- The last request a receiver got: {body, headers}; a JSON body decoded.
app.get("/received/:name", function(req, res)
  local row = db.query("SELECT body, headers FROM received WHERE path = ? ORDER BY id DESC LIMIT 1",
    { req.params.name })[1]
  if not row then
    return res:json({ error = "nothing received" }, 404)
  end
  res:json({ body = body_of({ body = row.body }) or row.body, headers = json.decode(row.headers) })
end)

-- Inbox -------------------------------------------------------------------

app.post("/inbox/check", function(req, res)
  local b = body_of(req)
  res:json({ duplicate = inbox.check_and_mark(b.id, b.source, b.ttl and { ttl = b.ttl }) })
end)

app.post("/inbox/is-duplicate", function(req, res)
  local b = body_of(req)
  res:json({ duplicate = inbox.is_duplicate(b.id, b.source) })
end)

app.post("/inbox/mark", function(req, res)
  local b = body_of(req)
  inbox.mark_processed(b.id, b.source, b.ttl and { ttl = b.ttl })
  res:json({ ok = true })
end)

app.get("/inbox/cleanup", function(req, res)
  res:json({ deleted = inbox.cleanup() })
end)

-- Email -------------------------------------------------------------------

-- The body is email.send's options (?async=1 is for app.js).
app.post("/email/send", function(req, res)
  res:json(email.send(body_of(req)))
end)
