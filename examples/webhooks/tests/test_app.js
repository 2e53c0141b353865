// cove test examples/webhooks — the cases run in order against one database.
// As in Hull, tests call handlers directly: no middleware (so no
// idempotency replay here), and http is not configured, so deliveries fail
// and wait for a retry. crates/cove/tests/examples_reliability.rs delivers
// for real.
import { crypto } from "hull:crypto";

// The development secret, as the app uses it without WEBHOOK_SECRET.
const SECRET_HEX = Array.from("whsec_change-me-in-production", (c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join(
  "",
);

const postJson = (path, value) => test.post(path, { body: JSON.stringify(value) });
const receive = (body, headers) => test.post("/webhooks/receive", { body, headers });

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("POST /webhooks validates its input", () => {
  test.eq(test.post("/webhooks", { body: "nope" }).json.error, "invalid JSON");
  let r = postJson("/webhooks", { url: "" });
  test.eq(r.status, 400);
  test.eq(r.json.errors, { url: "is required", events: "is required" });
  r = postJson("/webhooks", { url: "ftp://x", events: "a" });
  test.eq(r.json.errors.url, "must be an http:// or https:// URL");
});

test("POST /webhooks registers a subscription", () => {
  const r = postJson("/webhooks", { url: "http://127.0.0.1:9/hook", events: ["user.created", "user.deleted"] });
  test.eq(r.status, 201);
  test.eq(r.json, { id: 1, url: "http://127.0.0.1:9/hook", events: "user.created,user.deleted", active: 1 });
  test.eq(postJson("/webhooks", { url: "http://127.0.0.1:9/all", events: "*" }).status, 201);
});

test("GET /webhooks lists them", () => {
  const list = test.get("/webhooks").json;
  test.eq(list.length, 2);
  test.eq(list[0].events, "user.created,user.deleted");
  test.eq(list[1].events, "*");
});

test("POST /events validates its input", () => {
  test.eq(test.post("/events", { body: "{" }).status, 400);
  const r = postJson("/events", { data: {} });
  test.eq(r.status, 400);
  test.eq(r.json.errors.event, "is required");
});

test("POST /events stores the event and queues one delivery per subscriber", () => {
  const r = postJson("/events", { event: "user.created", data: { id: 7 } });
  test.eq(r.status, 200);
  test.eq(r.json, { event_id: 1, webhooks_queued: 2 });
  // The wildcard subscriber only.
  test.eq(postJson("/events", { event: "order.paid" }).json.webhooks_queued, 1);
});

test("GET /events lists them, newest first", () => {
  const events = test.get("/events").json;
  test.eq(events.length, 2);
  test.eq(events[0].event_type, "order.paid");
  test.eq(JSON.parse(events[1].payload).data, { id: 7 });
});

test("undeliverable: the outbox keeps the items for a retry", () => {
  test.eq(test.get("/outbox/stats").json, { pending: 3, delivered: 0, failed: 0 });
  // Not due yet: the first retry waits 20 seconds.
  test.eq(test.post("/outbox/flush").json, { delivered: 0, failed: 0, retried: 0 });
});

test("GET /webhooks/:id/deliveries shows the attempts", () => {
  const items = test.get("/webhooks/1/deliveries").json;
  test.eq(items.length, 1);
  test.eq(items[0].state, "pending");
  test.eq(items[0].attempts, 1);
  test.ok(items[0].last_error.includes("not configured"), items[0].last_error);
  test.eq(test.get("/webhooks/2/deliveries").json.length, 2);
  test.eq(test.get("/webhooks/99/deliveries").status, 404);
});

test("POST /webhooks/receive checks the signature", () => {
  test.eq(receive("{}").json.error, "missing signature");
  let r = receive("{}", { "X-Webhook-Signature": "md5=abc" });
  test.eq(r.status, 401);
  test.eq(r.json.error, "invalid signature format");
  r = receive("{}", { "X-Webhook-Signature": "sha256=invalid" });
  test.eq(r.status, 401);
  test.eq(r.json.error, "invalid signature");
});

test("POST /webhooks/receive accepts a signed payload once per event id", () => {
  const body = '{"event":"user.created"}';
  const headers = {
    "X-Webhook-Signature": `sha256=${crypto.hmacSha256(body, SECRET_HEX)}`,
    "X-Webhook-Event-Id": "evt-1",
  };
  test.eq(receive(body, headers).json, { received: true, event: "user.created" });
  test.eq(receive(body, headers).json, { received: true, duplicate: true });
});

test("DELETE /webhooks/:id", () => {
  test.eq(test.delete("/webhooks/1").json, { ok: true });
  test.eq(test.delete("/webhooks/1").status, 404);
});
