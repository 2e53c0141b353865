-- webhooks: subscribers register a URL for event types; every event posted
-- to /events is stored and delivered to them, signed, through the outbox
-- (retried with backoff until it gets a 2xx). The same app also receives
-- webhooks: /webhooks/receive checks the signature and drops duplicates.
--
--   WEBHOOK_SECRET=s3cret cove -p 8080 -d webhooks.db examples/webhooks/app.lua
--   curl -X POST localhost:8080/webhooks \
--     -d '{"url":"http://127.0.0.1:8080/webhooks/receive","events":"user.created"}'
--   curl -X POST localhost:8080/events -H 'Idempotency-Key: e1' \
--     -d '{"event":"user.created","data":{"id":1}}'

app.manifest({ env = { "WEBHOOK_SECRET" }, hosts = { "127.0.0.1" } })

local idempotency = require("hull.middleware.idempotency")
local outbox = require("hull.middleware.outbox")
local inbox = require("hull.middleware.inbox")

idempotency.init()
outbox.init({ max_attempts = 5 })
inbox.init({ ttl = 604800 })

-- The signing secret comes from WEBHOOK_SECRET. Without it (and always
-- under `cove test`, where env is unavailable) a development secret is
-- used, and the log says so: a forgotten secret must not go unnoticed.
local DEV_SECRET = "whsec_change-me-in-production"

local function signing_secret()
  local ok, value = pcall(env.get, "WEBHOOK_SECRET")
  if ok and value ~= nil and value ~= "" then
    return value
  end
  log.warn("WEBHOOK_SECRET is not set: webhooks are signed with the development secret")
  return DEV_SECRET
end

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- crypto.hmac_sha256 takes its key as hex.
local SECRET = signing_secret()
if #SECRET > 128 then
  error("WEBHOOK_SECRET must be at most 128 bytes long")
end
local SECRET_HEX = hex(SECRET)

local function sign(payload)
  return "sha256=" .. crypto.hmac_sha256(payload, SECRET_HEX)
end

-- The decoded JSON object of the request, or nil.
local function json_body(req)
  local ok, data = pcall(json.decode, req.body)
  if ok and type(data) == "table" then
    return data
  end
  return nil
end

-- Whether a comma-separated subscription list covers `event`.
local function subscribed(events, event)
  for name in string.gmatch(events, "[^,]+") do
    name = name:match("^%s*(.-)%s*$")
    if name == event or name == "*" then
      return true
    end
  end
  return false
end

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

-- Subscriptions ------------------------------------------------------------

app.post("/webhooks", function(req, res)
  local body = json_body(req)
  if not body then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local events = body.events
  if type(events) == "table" then
    events = table.concat(events, ",")
  end
  local errors = {}
  if type(body.url) ~= "string" or body.url == "" then
    errors.url = "is required"
  elseif not body.url:match("^https?://") then
    errors.url = "must be an http:// or https:// URL"
  end
  if type(events) ~= "string" or events == "" then
    errors.events = "is required"
  end
  if next(errors) then
    return res:json({ errors = errors }, 400)
  end
  db.exec("INSERT INTO webhooks (url, events, created_at) VALUES (?, ?, ?)",
    { body.url, events, time.now() })
  res:json({ id = db.last_id(), url = body.url, events = events, active = 1 }, 201)
end)

app.get("/webhooks", function(req, res)
  res:json(db.query("SELECT id, url, events, active, created_at FROM webhooks ORDER BY id"))
end)

app.del("/webhooks/:id", function(req, res)
  if db.exec("DELETE FROM webhooks WHERE id = ?", { req.params.id }) == 0 then
    return res:json({ error = "webhook not found" }, 404)
  end
  res:json({ ok = true })
end)

-- What the outbox did with this webhook's deliveries (newest first).
app.get("/webhooks/:id/deliveries", function(req, res)
  local hook = db.query("SELECT url FROM webhooks WHERE id = ?", { req.params.id })[1]
  if not hook then
    return res:json({ error = "webhook not found" }, 404)
  end
  res:json(outbox.list({ destination = hook.url }))
end)

-- Events -------------------------------------------------------------------

-- A client that retries POST /events with the same Idempotency-Key gets the
-- first answer again; the event is stored and sent once.
app.use_post("POST", "/events", idempotency.middleware())

app.post("/events", function(req, res)
  local body = json_body(req)
  if not body then
    return idempotency.respond(req, res, 400, { error = "invalid JSON" })
  end
  if type(body.event) ~= "string" or body.event == "" then
    return idempotency.respond(req, res, 400, { errors = { event = "is required" } })
  end
  -- The event and its deliveries are written together or not at all.
  local event_id, queued = db.batch(function()
    local payload = json.encode({ event = body.event, data = body.data, timestamp = time.now() })
    db.exec("INSERT INTO event_log (event_type, payload, created_at) VALUES (?, ?, ?)",
      { body.event, payload, time.now() })
    local id = db.last_id()
    local n = 0
    for _, hook in ipairs(db.query("SELECT url, events FROM webhooks WHERE active = 1")) do
      if subscribed(hook.events, body.event) then
        outbox.enqueue({
          kind = "webhook",
          destination = hook.url,
          payload = payload,
          headers = {
            ["Content-Type"] = "application/json",
            ["X-Webhook-Event"] = body.event,
            ["X-Webhook-Event-Id"] = tostring(id),
            ["X-Webhook-Signature"] = sign(payload),
          },
        })
        n = n + 1
      end
    end
    return id, n
  end)
  idempotency.respond(req, res, 200, { event_id = event_id, webhooks_queued = queued })
  -- Deliver right away; what fails is retried by later flushes. The
  -- handler waits for the posts without holding up the worker.
  outbox.flush()
end)

app.get("/events", function(req, res)
  res:json(db.query("SELECT id, event_type, payload, created_at FROM event_log "
    .. "ORDER BY id DESC LIMIT 50"))
end)

-- Delivery -----------------------------------------------------------------

-- Retry what is due (run it from a cron job: curl -X POST .../outbox/flush).
app.post("/outbox/flush", function(req, res)
  res:json(outbox.flush())
end)

app.get("/outbox/stats", function(req, res)
  res:json(outbox.stats())
end)

-- Receiving ----------------------------------------------------------------

-- A webhook endpoint: the signature must be the HMAC-SHA256 of the raw body
-- with the shared secret; X-Webhook-Event-Id makes redeliveries harmless.
app.post("/webhooks/receive", function(req, res)
  local signature = req.headers["x-webhook-signature"]
  if signature == nil or signature == "" then
    return res:json({ error = "missing signature" }, 401)
  end
  local mac = signature:match("^sha256=(.*)$")
  if mac == nil then
    return res:json({ error = "invalid signature format" }, 401)
  end
  if not crypto.hmac_sha256_verify(req.body or "", SECRET_HEX, mac) then
    return res:json({ error = "invalid signature" }, 401)
  end
  local event_id = req.headers["x-webhook-event-id"]
  if event_id and inbox.check_and_mark(event_id, "webhook") then
    return res:json({ received = true, duplicate = true })
  end
  local body = json_body(req) or {}
  log.info("webhook received: " .. tostring(body.event))
  res:json({ received = true, event = body.event or "unknown" })
end)
