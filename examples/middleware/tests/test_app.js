// cove test examples/middleware. Handlers run alone by default (as in
// Hull), so there is no request id; `middleware: true` runs the logger,
// the counter, CORS and the rate limit too.

const withMw = { middleware: true };

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("GET / without middleware has no request id", () => {
  test.eq(test.get("/").json, { message: "Middleware example" });
});

test("the logger gives each request an id", () => {
  const r = test.get("/", withMw);
  test.eq(r.json.message, "Middleware example");
  test.eq(r.json.request_id, r.headers["x-request-id"]);
  const again = test.get("/", withMw);
  test.ok(again.json.request_id !== r.json.request_id, "ids are not reused");
});

test("GET /api/items is rate limited", () => {
  const r = test.get("/api/items", withMw);
  test.eq(r.json.items, ["apple", "banana", "cherry"]);
  test.eq(r.headers["x-ratelimit-limit"], "60");
  test.eq(r.headers["x-ratelimit-remaining"], "59");
});

test("CORS headers for an allowed origin only", () => {
  let r = test.get("/api/items", { middleware: true, headers: { Origin: "http://localhost:5173" } });
  test.eq(r.headers["access-control-allow-origin"], "http://localhost:5173");
  r = test.get("/api/items", { middleware: true, headers: { Origin: "http://evil.example" } });
  test.eq(r.headers["access-control-allow-origin"], undefined);
});

test("POST /api/items echoes the item", () => {
  const r = test.post("/api/items", { body: '{"name": "date"}' });
  test.eq(r.status, 201);
  test.eq(r.json.created, { name: "date" });
  test.eq(test.post("/api/items", { body: "nope" }).json, { error: "invalid JSON" });
});

test("GET /api/debug counts the requests middleware saw", () => {
  // Five requests above ran with middleware; handler-only calls are not counted.
  test.eq(test.get("/api/debug").json, { total_requests: 5 });
  const r = test.get("/api/debug", withMw);
  test.eq(r.json.total_requests, 6);
  test.eq(r.json.request_id, r.headers["x-request-id"]);
});
