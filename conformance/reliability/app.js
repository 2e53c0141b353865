// The reliability stdlib (idempotency, outbox, inbox, email) for
// conformance/specs/stdlib_reliability*.toml; app.lua is its twin.
//
// Outbound calls go to this server itself (127.0.0.1:<port>, the port
// comes from the spec) or to a closed port. The server under test has one
// worker, so a call that reaches the server itself must use the promise
// forms (?async=1: flushAsync, sendAsync); Hull's synchronous forms would
// block the worker that has to answer them.

import { app } from "hull:app";
import { db } from "hull:db";
import { idempotency } from "hull:middleware:idempotency";
import { outbox } from "hull:middleware:outbox";
import { inbox } from "hull:middleware:inbox";
import email from "hull:email";

app.manifest({ hosts: ["127.0.0.1"] });

idempotency.init();
outbox.init({ maxAttempts: 2 });
inbox.init();

function bodyOf(req) {
  try {
    return JSON.parse(req.body ?? "");
  } catch {
    return null;
  }
}

// Idempotency ---------------------------------------------------------------

// X-User stands in for a login: keys are scoped to the session's user_id.
app.use("POST", "/idem/*", (req) => {
  const user = req.headers["x-user"];
  if (user) req.ctx.session = { user_id: Number(user) };
  return 0;
});
app.usePost("POST", "/idem/*", idempotency.middleware());

function newOrder(req) {
  db.exec("INSERT INTO orders (body) VALUES (?)", [req.body ?? ""]);
  return db.lastId();
}

app.post("/idem/orders", (req, res) => {
  const id = newOrder(req);
  idempotency.respond(req, res, 201, { order: id, item: bodyOf(req)?.item }, { "X-Order": String(id) });
});

// Answers without idempotency.respond: the key stays in flight.
app.post("/idem/unfinished", (req, res) => {
  res.json({ order: newOrder(req) });
});

// Marks the key complete without a stored response.
app.post("/idem/plain", (req, res) => {
  newOrder(req);
  idempotency.complete(req);
  res.text("done");
});

// Keys that live two seconds (the expiry test in tests/examples_reliability.rs).
app.usePost("POST", "/short/*", idempotency.middleware({ ttl: 2 }));
app.post("/short/orders", (req, res) => {
  idempotency.respond(req, res, 201, { order: newOrder(req) });
});

app.get("/idem/cleanup", (req, res) => res.json({ deleted: idempotency.cleanup() }));

// Outbox ------------------------------------------------------------------

app.post("/outbox/enqueue", (req, res) => {
  res.json({ id: outbox.enqueue(bodyOf(req)) });
});

app.post("/outbox/flush", async (req, res) => {
  res.json(req.query.async ? await outbox.flushAsync() : outbox.flush());
});

app.get("/outbox/stats", (req, res) => res.json(outbox.stats()));

app.get("/outbox/list", (req, res) => {
  const items = outbox.list({ destination: req.query.destination, state: req.query.state });
  res.json(
    items.map((item) => ({ id: item.id, state: item.state, attempts: item.attempts, last_error: item.last_error ?? "" })),
  );
});

app.get("/outbox/cleanup", (req, res) => res.json({ deleted: outbox.cleanup(0) }));

// Receivers ---------------------------------------------------------------

const RECORDED = ["content-type", "x-sig", "idempotency-key", "x-postmark-server-token", "authorization"];

// Records the request; ?status= picks the answer.
app.post("/receive/:name", (req, res) => {
  const seen = {};
  for (const name of RECORDED) {
    if (req.headers[name] !== undefined) seen[name] = req.headers[name];
  }
  db.exec("INSERT INTO received (path, body, headers) VALUES (?, ?, ?)", [
    req.params.name,
    req.body,
    JSON.stringify(seen),
  ]);
  res.status(Number(req.query.status ?? 200));
  res.text(req.query.say ?? "ok");
});

// The last request a receiver got: {body, headers}; a JSON body decoded.
app.get("/received/:name", (req, res) => {
  const [row] = db.query("SELECT body, headers FROM received WHERE path = ? ORDER BY id DESC LIMIT 1", [
    req.params.name,
  ]);
  if (!row) return res.json({ error: "nothing received" }, 404);
  res.json({ body: bodyOf({ body: row.body }) ?? row.body, headers: JSON.parse(row.headers) });
});

// Inbox -------------------------------------------------------------------

app.post("/inbox/check", (req, res) => {
  const b = bodyOf(req);
  res.json({ duplicate: inbox.checkAndMark(b.id, b.source, b.ttl ? { ttl: b.ttl } : undefined) });
});

app.post("/inbox/is-duplicate", (req, res) => {
  const b = bodyOf(req);
  res.json({ duplicate: inbox.isDuplicate(b.id, b.source) });
});

app.post("/inbox/mark", (req, res) => {
  const b = bodyOf(req);
  inbox.markProcessed(b.id, b.source, b.ttl ? { ttl: b.ttl } : undefined);
  res.json({ ok: true });
});

app.get("/inbox/cleanup", (req, res) => res.json({ deleted: inbox.cleanup() }));

// Email -------------------------------------------------------------------

// The body is email.send's options.
app.post("/email/send", async (req, res) => {
  const opts = bodyOf(req) ?? undefined;
  res.json(req.query.async ? await email.sendAsync(opts) : email.send(opts));
});
