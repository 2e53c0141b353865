// auth: accounts with session cookies (register, login, logout, me). The
// JavaScript twin of app.lua.
//
//   cove -p 8080 -d auth.db examples/auth/app.js
//   curl -X POST localhost:8080/register -d '{"email":"a@example.com","password":"secret123","name":"Ann"}'
//   curl -c jar -X POST localhost:8080/login -d '{"email":"a@example.com","password":"secret123"}'
//   curl -b jar localhost:8080/me
//
// Sessions are rows in SQLite (hull:middleware:session), so the cookie
// works on every worker and survives a restart.

import { app } from "hull:app";
import { db } from "hull:db";
import { crypto } from "hull:crypto";
import { json } from "hull:json";
import { time } from "hull:time";
import { validate } from "hull:validate";
import { session } from "hull:middleware:session";
import { auth } from "hull:middleware:auth";

session.init({ ttl: 3600 });

// Every request: a valid `hull.sid` cookie puts the session in
// req.ctx.session; without one the request goes on, and the routes that
// need a user answer 401 themselves.
app.use("*", "/*", auth.sessionMiddleware({ optional: true }));

// The decoded JSON object of the request, or null.
function jsonBody(req) {
  try {
    const data = json.decode(req.body ?? "");
    return data !== null && typeof data === "object" ? data : null;
  } catch {
    return null;
  }
}

// A login for an unknown email still checks a password against this hash,
// so the answer takes as long as for a known one and does not tell which
// emails have accounts.
const NO_USER_HASH =
  "pbkdf2:100000:00000000000000000000000000000000:9beab6492276d614954f6018c2de628fa02d9ec0b69d36b1731089aae559d904";

app.get("/health", (req, res) => res.json({ status: "ok" }));

// The …Async password functions hash on a worker pool: other requests are
// served meanwhile.
app.post("/register", async (req, res) => {
  const body = jsonBody(req);
  if (!body) return res.json({ error: "invalid JSON" }, 400);
  const [ok, errors] = validate.check(body, {
    email: { required: true, type: "string", trim: true, email: true },
    password: { required: true, type: "string", min: 8 },
    name: { required: true, type: "string", trim: true },
  });
  if (!ok) return res.json({ errors }, 400);
  const taken = () => db.query("SELECT 1 FROM users WHERE email = ?", [body.email]).length > 0;
  if (taken()) return res.json({ error: "email already registered" }, 409);
  // The hash is made outside the transaction, which checks the email again.
  const hash = await crypto.hashPasswordAsync(body.password);
  const id = db.batch(() => {
    if (taken()) return null;
    db.exec("INSERT INTO users (email, password_hash, name, created_at) VALUES (?, ?, ?, ?)", [
      body.email, hash, body.name, time.now(),
    ]);
    return db.lastId();
  });
  if (id === null) return res.json({ error: "email already registered" }, 409);
  res.json({ id, email: body.email, name: body.name }, 201);
});

app.post("/login", async (req, res) => {
  const body = jsonBody(req);
  if (!body) return res.json({ error: "invalid JSON" }, 400);
  const [ok, errors] = validate.check(body, {
    email: { required: true, type: "string", trim: true },
    password: { required: true, type: "string" },
  });
  if (!ok) return res.json({ errors }, 400);
  const [user] = db.query("SELECT id, email, name, password_hash FROM users WHERE email = ?", [body.email]);
  const valid = await crypto.verifyPasswordAsync(body.password, user?.password_hash ?? NO_USER_HASH);
  if (!user || !valid) return res.json({ error: "invalid credentials" }, 401);
  auth.login(req, res, { user_id: user.id, email: user.email });
  res.json({ id: user.id, email: user.email, name: user.name });
});

app.post("/logout", (req, res) => {
  if (!req.ctx.session) return res.json({ error: "authentication required" }, 401);
  auth.logout(req, res);
  res.json({ ok: true });
});

app.get("/me", (req, res) => {
  const s = req.ctx.session;
  if (!s) return res.json({ error: "authentication required" }, 401);
  const [user] = db.query("SELECT id, email, name, created_at FROM users WHERE id = ?", [s.user_id]);
  if (!user) return res.json({ error: "user not found" }, 404);
  res.json(user);
});
