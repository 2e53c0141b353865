// The middleware stdlib (hull:middleware:*) under test: the JavaScript half
// of the app pair driven by ../specs/stdlib_middleware*.toml and by
// crates/cove/tests/shared_stdlib.rs (two workers).

import { app } from "hull:app";
import { db } from "hull:db";
import { crypto } from "hull:crypto";
import { cors } from "hull:middleware:cors";
import { ratelimit } from "hull:middleware:ratelimit";
import { logger } from "hull:middleware:logger";
import { session } from "hull:middleware:session";
import { auth } from "hull:middleware:auth";
import { csrf } from "hull:middleware:csrf";
import { transaction } from "hull:middleware:transaction";

// Names this worker's VM, so tests can tell that several workers answered.
const VM = new DataView(crypto.random(4)).getUint32(0, true).toString(16).padStart(8, "0");
app.use("*", "/*", (req, res) => {
  res.header("X-VM", VM);
  return 0;
});

session.init({ ttl: 3600 });

// A window of 10^9 s (2001–2033) never rolls over during a test run.
const LONG = 1000000000;

// cors ------------------------------------------------------------------------
app.use("*", "/cors/*", cors.middleware({
  origins: ["http://good.example", "http://also.example"],
  credentials: true,
  max_age: 600,
}));
app.use("*", "/cors-any/*", cors.middleware());
app.get("/cors/data", (req, res) => res.json({ ok: true }));
app.get("/cors-any/data", (req, res) => res.json({ ok: true }));
app.get("/cors-check", (req, res) => {
  const list = ["http://a.example"];
  res.json({
    listed: cors.isAllowedOrigin("http://a.example", list),
    unlisted: cors.isAllowedOrigin("http://b.example", list),
    star: cors.isAllowedOrigin("http://b.example", ["*"]),
  });
});

// ratelimit -------------------------------------------------------------------
app.use("*", "/rl/global", ratelimit.middleware({ limit: 3, window: LONG }));
app.use("*", "/rl/keyed", ratelimit.middleware({
  limit: 1, window: LONG,
  key: (req) => req.headers["x-client"],
}));
app.use("*", "/rl/shared", ratelimit.middleware({ limit: 10, window: LONG, name: "shared" }));
app.use("*", "/rl/few-keys", ratelimit.middleware({
  limit: 5, window: LONG, maxKeys: 2,
  key: (req) => req.headers["x-client"],
}));
const ok = (req, res) => res.json({ ok: true });
app.get("/rl/global", ok);
app.get("/rl/keyed", ok);
app.get("/rl/shared", ok);
app.get("/rl/few-keys", ok);
app.get("/rl-check", (req, res) => {
  const buckets = {};
  const results = [1000, 1001, 1002, 1020].map((now) => ratelimit.check(buckets, "k", 2, 60, now));
  res.json({ results, buckets: Object.keys(buckets).length });
});

// logger ----------------------------------------------------------------------
app.use("*", "/log/*", logger.middleware({ skip: ["/log/skip"], include_headers: ["X-Trace"] }));
const showId = (req, res) => res.json({ request_id: req.ctx.request_id ?? false });
app.get("/log/a", showId);
app.post("/log/a", showId);
app.get("/log/skip", showId);
app.get("/log-format", (req, res) => {
  res.json({
    line: logger.formatLine([
      ["plain", "abc"], ["n", 42], ["space", "a b"], ["eq", "x=y"],
      ["quote", 'say "hi"'], ["nl", "1\n2"], ["slash", "a\\b"],
    ]),
    skip: logger.shouldSkip("/health", ["/health"]),
    keep: logger.shouldSkip("/healthz", ["/health"]),
  });
});

// session ---------------------------------------------------------------------
app.get("/session/lifecycle", (req, res) => {
  const id = session.create({ user: "ann", n: 1 });
  const first = session.load(id);
  const updated = session.update(id, { user: "ann", n: 2 });
  const second = session.load(id);
  const destroyed = session.destroy(id);
  res.json({
    id_is_hex64: /^[0-9a-f]{64}$/.test(id),
    ids_differ: session.create({}) !== session.create({}),
    first, updated, second, destroyed,
    gone: session.load(id) === null,
    destroyed_again: session.destroy(id),
    update_gone: session.update(id, {}),
    unknown: session.load("no-such-session") === null,
  });
});
app.get("/session/load", (req, res) => {
  const data = session.load(req.query.id);
  res.json({ found: data !== null, data: data ?? false });
});
app.post("/session/cleanup", (req, res) => res.json({ removed: session.cleanup() }));

// auth ------------------------------------------------------------------------
app.use("*", "/me/*", auth.sessionMiddleware({ excludePaths: ["/me/public", "/me/open/*"] }));
app.use("*", "/opt/*", auth.sessionMiddleware({ optional: true }));
app.use("*", "/members/*", auth.sessionMiddleware({ loginPath: "/login" }));
app.use("*", "/jwt/*", auth.jwtMiddleware({ secret: "conformance-secret" }));
app.use("*", "/jwt-opt/*", auth.jwtMiddleware({ secret: "conformance-secret", optional: true }));
const showCtx = (req, res) => res.json(req.ctx);
app.get("/me/ctx", showCtx);
app.get("/opt/ctx", (req, res) => res.json({ logged_in: req.ctx.session !== undefined }));
app.get("/members/page", showCtx);
app.get("/jwt/ctx", showCtx);
app.get("/me/public", (req, res) => res.json({ public: true }));
app.get("/me/open/page", (req, res) => res.json({ public: true }));
app.get("/jwt-opt/ctx", (req, res) => res.json({ authenticated: req.ctx.claims !== undefined }));
app.post("/auth/login", (req, res) => {
  const id = auth.login(req, res, { user_id: 7 });
  res.json({ id_is_hex64: id.length === 64, loaded: session.load(id) });
});
app.post("/auth/logout", (req, res) => {
  auth.logout(req, res);
  res.json({ ok: true });
});

// csrf ------------------------------------------------------------------------
const CSRF_SECRET = "conformance-csrf-secret";
app.usePost("*", "/csrf/*", csrf.middleware({ secret: CSRF_SECRET }));
app.get("/csrf/form", (req, res) => res.json({ token: req.ctx.csrf_token ?? false }));
app.post("/csrf/submit", (req, res) => res.json({ accepted: true }));
app.get("/csrf-check", (req, res) => {
  const t = csrf.generate("sid-1", CSRF_SECRET);
  const last = t.slice(-1) === "0" ? "1" : "0";
  res.json({
    valid: csrf.verify(t, "sid-1", CSRF_SECRET),
    other_session: csrf.verify(t, "sid-2", CSRF_SECRET),
    other_secret: csrf.verify(t, "sid-1", "another-secret"),
    tampered: csrf.verify(t.slice(0, -1) + last, "sid-1", CSRF_SECRET),
    expired: csrf.verify(t, "sid-1", CSRF_SECRET, -1),
    garbage: csrf.verify("not-a-token", "sid-1", CSRF_SECRET),
    missing: csrf.verify(undefined, "sid-1", CSRF_SECRET),
  });
});

// transaction -----------------------------------------------------------------
app.usePost("POST", "/txn/*", transaction.middleware());
const countNotes = () => db.query("SELECT count(*) AS n FROM notes")[0].n;
app.post("/txn/run", (req, res) => {
  const result = transaction.run(() => {
    db.exec("INSERT INTO notes (title) VALUES ('a')");
    db.exec("INSERT INTO notes (title) VALUES ('b')");
    return "done";
  });
  res.json({ result, notes: countNotes(), marked: req.ctx._txn === true });
});
app.post("/txn/attempt", (req, res) => {
  const [ok, err] = transaction.attempt(() => {
    db.exec("INSERT INTO notes (title) VALUES ('c')");
    throw new Error("boom");
  });
  res.json({ ok, error_says_boom: String(err?.message).includes("boom"), notes: countNotes() });
});
app.post("/txn/run-fails", () => {
  transaction.run(() => {
    db.exec("INSERT INTO notes (title) VALUES ('d')");
    throw new Error("boom");
  });
});
