-- cove test examples/middleware. Handlers run alone by default (as in
-- Hull), so there is no request id; `middleware = true` runs the logger,
-- the counter, CORS and the rate limit too.

local with_mw = { middleware = true }

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("GET / without middleware has no request id", function()
  test.eq(test.get("/").json, { message = "Middleware example" })
end)

test("the logger gives each request an id", function()
  local r = test.get("/", with_mw)
  test.eq(r.json.message, "Middleware example")
  test.eq(r.json.request_id, r.headers["x-request-id"])
  local again = test.get("/", with_mw)
  test.ok(again.json.request_id ~= r.json.request_id, "ids are not reused")
end)

test("GET /api/items is rate limited", function()
  local r = test.get("/api/items", with_mw)
  test.eq(r.json.items, { "apple", "banana", "cherry" })
  test.eq(r.headers["x-ratelimit-limit"], "60")
  test.eq(r.headers["x-ratelimit-remaining"], "59")
end)

test("CORS headers for an allowed origin only", function()
  local r = test.get("/api/items", { middleware = true, headers = { Origin = "http://localhost:5173" } })
  test.eq(r.headers["access-control-allow-origin"], "http://localhost:5173")
  r = test.get("/api/items", { middleware = true, headers = { Origin = "http://evil.example" } })
  test.eq(r.headers["access-control-allow-origin"], nil)
end)

test("POST /api/items echoes the item", function()
  local r = test.post("/api/items", { body = '{"name": "date"}' })
  test.eq(r.status, 201)
  test.eq(r.json.created, { name = "date" })
  test.eq(test.post("/api/items", { body = "nope" }).json, { error = "invalid JSON" })
end)

test("GET /api/debug counts the requests middleware saw", function()
  -- Five requests above ran with middleware; handler-only calls are not counted.
  test.eq(test.get("/api/debug").json, { total_requests = 5 })
  local r = test.get("/api/debug", with_mw)
  test.eq(r.json.total_requests, 6)
  test.eq(r.json.request_id, r.headers["x-request-id"])
end)
