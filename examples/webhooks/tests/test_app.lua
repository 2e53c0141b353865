-- cove test examples/webhooks — the cases run in order against one database.
-- As in Hull, tests call handlers directly: no middleware (so no
-- idempotency replay here), and http is not configured, so deliveries fail
-- and wait for a retry. crates/cove/tests/examples_reliability.rs delivers
-- for real.

-- The development secret, as the app uses it without WEBHOOK_SECRET.
local SECRET_HEX = ("whsec_change-me-in-production"):gsub(".", function(c)
  return string.format("%02x", c:byte())
end)

local function post_json(path, value)
  return test.post(path, { body = json.encode(value) })
end

local function receive(body, headers)
  return test.post("/webhooks/receive", { body = body, headers = headers })
end

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("POST /webhooks validates its input", function()
  test.eq(test.post("/webhooks", { body = "nope" }).json.error, "invalid JSON")
  local r = post_json("/webhooks", { url = "" })
  test.eq(r.status, 400)
  test.eq(r.json.errors, { url = "is required", events = "is required" })
  r = post_json("/webhooks", { url = "ftp://x", events = "a" })
  test.eq(r.json.errors.url, "must be an http:// or https:// URL")
end)

test("POST /webhooks registers a subscription", function()
  local r = post_json("/webhooks", { url = "http://127.0.0.1:9/hook", events = { "user.created", "user.deleted" } })
  test.eq(r.status, 201)
  test.eq(r.json, { id = 1, url = "http://127.0.0.1:9/hook", events = "user.created,user.deleted", active = 1 })
  test.eq(post_json("/webhooks", { url = "http://127.0.0.1:9/all", events = "*" }).status, 201)
end)

test("GET /webhooks lists them", function()
  local list = test.get("/webhooks").json
  test.eq(#list, 2)
  test.eq(list[1].events, "user.created,user.deleted")
  test.eq(list[2].events, "*")
end)

test("POST /events validates its input", function()
  test.eq(test.post("/events", { body = "{" }).status, 400)
  local r = post_json("/events", { data = {} })
  test.eq(r.status, 400)
  test.eq(r.json.errors.event, "is required")
end)

test("POST /events stores the event and queues one delivery per subscriber", function()
  local r = post_json("/events", { event = "user.created", data = { id = 7 } })
  test.eq(r.status, 200)
  test.eq(r.json, { event_id = 1, webhooks_queued = 2 })
  -- The wildcard subscriber only.
  test.eq(post_json("/events", { event = "order.paid" }).json.webhooks_queued, 1)
end)

test("GET /events lists them, newest first", function()
  local events = test.get("/events").json
  test.eq(#events, 2)
  test.eq(events[1].event_type, "order.paid")
  test.eq(json.decode(events[2].payload).data, { id = 7 })
end)

test("undeliverable: the outbox keeps the items for a retry", function()
  test.eq(test.get("/outbox/stats").json, { pending = 3, delivered = 0, failed = 0 })
  -- Not due yet: the first retry waits 20 seconds.
  test.eq(test.post("/outbox/flush").json, { delivered = 0, failed = 0, retried = 0 })
end)

test("GET /webhooks/:id/deliveries shows the attempts", function()
  local items = test.get("/webhooks/1/deliveries").json
  test.eq(#items, 1)
  test.eq(items[1].state, "pending")
  test.eq(items[1].attempts, 1)
  test.ok(items[1].last_error:find("not configured", 1, true), items[1].last_error)
  test.eq(#test.get("/webhooks/2/deliveries").json, 2)
  test.eq(test.get("/webhooks/99/deliveries").status, 404)
end)

test("POST /webhooks/receive checks the signature", function()
  test.eq(receive("{}").json.error, "missing signature")
  local r = receive("{}", { ["X-Webhook-Signature"] = "md5=abc" })
  test.eq(r.status, 401)
  test.eq(r.json.error, "invalid signature format")
  r = receive("{}", { ["X-Webhook-Signature"] = "sha256=invalid" })
  test.eq(r.status, 401)
  test.eq(r.json.error, "invalid signature")
end)

test("POST /webhooks/receive accepts a signed payload once per event id", function()
  local body = '{"event":"user.created"}'
  local headers = {
    ["X-Webhook-Signature"] = "sha256=" .. crypto.hmac_sha256(body, SECRET_HEX),
    ["X-Webhook-Event-Id"] = "evt-1",
  }
  test.eq(receive(body, headers).json, { received = true, event = "user.created" })
  test.eq(receive(body, headers).json, { received = true, duplicate = true })
end)

test("DELETE /webhooks/:id", function()
  test.eq(test.delete("/webhooks/1").json, { ok = true })
  test.eq(test.delete("/webhooks/1").status, 404)
end)
