// webhooks: subscribers register a URL for event types; every event posted
// to /events is stored and delivered to them, signed, through the outbox
// (retried with backoff until it gets a 2xx). The same app also receives
// webhooks: /webhooks/receive checks the signature and drops duplicates.
// The JavaScript twin of app.lua.
//
//   WEBHOOK_SECRET=s3cret cove -p 8080 -d webhooks.db examples/webhooks/app.js
//   curl -X POST localhost:8080/webhooks \
//     -d '{"url":"http://127.0.0.1:8080/webhooks/receive","events":"user.created"}'
//   curl -X POST localhost:8080/events -H 'Idempotency-Key: e1' \
//     -d '{"event":"user.created","data":{"id":1}}'

import { app } from "hull:app";
import { db } from "hull:db";
import { env } from "hull:env";
import { log } from "hull:log";
import { time } from "hull:time";
import { crypto } from "hull:crypto";
import { idempotency } from "hull:middleware:idempotency";
import { outbox } from "hull:middleware:outbox";
import { inbox } from "hull:middleware:inbox";

app.manifest({ env: ["WEBHOOK_SECRET"], hosts: ["127.0.0.1"] });

idempotency.init();
outbox.init({ maxAttempts: 5 });
inbox.init({ ttl: 604800 });

// The signing secret comes from WEBHOOK_SECRET. Without it (and always
// under `cove test`, where env is unavailable) a development secret is
// used, and the log says so: a forgotten secret must not go unnoticed.
const DEV_SECRET = "whsec_change-me-in-production";

function signingSecret() {
  try {
    const value = env.get("WEBHOOK_SECRET");
    if (value) return value;
  } catch {
    // env is not configured (cove test): fall through.
  }
  log.warn("WEBHOOK_SECRET is not set: webhooks are signed with the development secret");
  return DEV_SECRET;
}

// crypto.hmacSha256 takes its key as hex: the secret's UTF-8 bytes, two
// digits each (encodeURIComponent already writes non-ASCII bytes as %XX).
function hexOf(s) {
  const bytes = encodeURIComponent(s).matchAll(/%([0-9A-F]{2})|./g);
  return Array.from(bytes, ([c, escaped]) => escaped ?? c.charCodeAt(0).toString(16).padStart(2, "0"))
    .join("")
    .toLowerCase();
}
const SECRET_HEX = hexOf(signingSecret());
if (SECRET_HEX.length > 256) throw new Error("WEBHOOK_SECRET must be at most 128 bytes long");

const sign = (payload) => `sha256=${crypto.hmacSha256(payload, SECRET_HEX)}`;

// The decoded JSON object of the request, or null.
function jsonBody(req) {
  try {
    const data = JSON.parse(req.body ?? "");
    return typeof data === "object" && data !== null ? data : null;
  } catch {
    return null;
  }
}

// Whether a comma-separated subscription list covers `event`.
const subscribed = (events, event) =>
  events.split(",").some((name) => name.trim() === event || name.trim() === "*");

app.get("/health", (req, res) => res.json({ status: "ok" }));

// Subscriptions ------------------------------------------------------------

app.post("/webhooks", (req, res) => {
  const body = jsonBody(req);
  if (!body) return res.json({ error: "invalid JSON" }, 400);
  const events = Array.isArray(body.events) ? body.events.join(",") : body.events;
  const errors = {};
  if (typeof body.url !== "string" || body.url === "") {
    errors.url = "is required";
  } else if (!/^https?:\/\//.test(body.url)) {
    errors.url = "must be an http:// or https:// URL";
  }
  if (typeof events !== "string" || events === "") errors.events = "is required";
  if (Object.keys(errors).length > 0) return res.json({ errors }, 400);
  db.exec("INSERT INTO webhooks (url, events, created_at) VALUES (?, ?, ?)", [body.url, events, time.now()]);
  res.json({ id: db.lastId(), url: body.url, events, active: 1 }, 201);
});

app.get("/webhooks", (req, res) => {
  res.json(db.query("SELECT id, url, events, active, created_at FROM webhooks ORDER BY id"));
});

app.del("/webhooks/:id", (req, res) => {
  if (db.exec("DELETE FROM webhooks WHERE id = ?", [req.params.id]) === 0) {
    return res.json({ error: "webhook not found" }, 404);
  }
  res.json({ ok: true });
});

// What the outbox did with this webhook's deliveries (newest first).
app.get("/webhooks/:id/deliveries", (req, res) => {
  const [hook] = db.query("SELECT url FROM webhooks WHERE id = ?", [req.params.id]);
  if (!hook) return res.json({ error: "webhook not found" }, 404);
  res.json(outbox.list({ destination: hook.url }));
});

// Events -------------------------------------------------------------------

// A client that retries POST /events with the same Idempotency-Key gets the
// first answer again; the event is stored and sent once.
app.usePost("POST", "/events", idempotency.middleware());

app.post("/events", async (req, res) => {
  const body = jsonBody(req);
  if (!body) return idempotency.respond(req, res, 400, { error: "invalid JSON" });
  if (typeof body.event !== "string" || body.event === "") {
    return idempotency.respond(req, res, 400, { errors: { event: "is required" } });
  }
  // The event and its deliveries are written together or not at all.
  const [eventId, queued] = db.batch(() => {
    const payload = JSON.stringify({ event: body.event, data: body.data, timestamp: time.now() });
    db.exec("INSERT INTO event_log (event_type, payload, created_at) VALUES (?, ?, ?)", [
      body.event,
      payload,
      time.now(),
    ]);
    const id = db.lastId();
    let n = 0;
    for (const hook of db.query("SELECT url, events FROM webhooks WHERE active = 1")) {
      if (!subscribed(hook.events, body.event)) continue;
      outbox.enqueue({
        kind: "webhook",
        destination: hook.url,
        payload,
        headers: {
          "Content-Type": "application/json",
          "X-Webhook-Event": body.event,
          "X-Webhook-Event-Id": String(id),
          "X-Webhook-Signature": sign(payload),
        },
      });
      n += 1;
    }
    return [id, n];
  });
  idempotency.respond(req, res, 200, { event_id: eventId, webhooks_queued: queued });
  // Deliver right away; what fails is retried by later flushes. Awaiting
  // the async form keeps the worker serving other requests meanwhile.
  await outbox.flushAsync();
});

app.get("/events", (req, res) => {
  res.json(db.query("SELECT id, event_type, payload, created_at FROM event_log ORDER BY id DESC LIMIT 50"));
});

// Delivery -----------------------------------------------------------------

// Retry what is due (run it from a cron job: curl -X POST .../outbox/flush).
app.post("/outbox/flush", async (req, res) => {
  res.json(await outbox.flushAsync());
});

app.get("/outbox/stats", (req, res) => res.json(outbox.stats()));

// Receiving ----------------------------------------------------------------

// A webhook endpoint: the signature must be the HMAC-SHA256 of the raw body
// with the shared secret; X-Webhook-Event-Id makes redeliveries harmless.
app.post("/webhooks/receive", (req, res) => {
  const signature = req.header("X-Webhook-Signature");
  if (!signature) return res.json({ error: "missing signature" }, 401);
  if (!signature.startsWith("sha256=")) return res.json({ error: "invalid signature format" }, 401);
  if (!crypto.hmacSha256Verify(req.body ?? "", SECRET_HEX, signature.slice("sha256=".length))) {
    return res.json({ error: "invalid signature" }, 401);
  }
  const eventId = req.header("X-Webhook-Event-Id");
  if (eventId && inbox.checkAndMark(eventId, "webhook")) {
    return res.json({ received: true, duplicate: true });
  }
  const body = jsonBody(req) ?? {};
  log.info(`webhook received: ${body.event}`);
  res.json({ received: true, event: body.event ?? "unknown" });
});
