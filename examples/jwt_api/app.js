// jwt_api: register, log in, then call the API with a Bearer token
// (hull:jwt, HS256). Passwords are stored as PBKDF2 hashes. The JavaScript
// twin of app.lua.
//
//   JWT_SECRET=$(openssl rand -hex 32) cove -p 8080 -d users.db examples/jwt_api/app.js
//   curl -X POST localhost:8080/register -d '{"email":"ann@example.com","password":"correct horse","name":"Ann"}'
//   curl -X POST localhost:8080/login -d '{"email":"ann@example.com","password":"correct horse"}'
//   curl -H "Authorization: Bearer <token>" localhost:8080/me

import { app } from "hull:app";
import { crypto } from "hull:crypto";
import { db } from "hull:db";
import { env } from "hull:env";
import { json } from "hull:json";
import { log } from "hull:log";
import { time } from "hull:time";
import { jwt } from "hull:jwt";
import { validate } from "hull:validate";

app.manifest({ env: ["JWT_SECRET"] });

// Tokens are valid for an hour (hull:jwt takes `exp` as absolute time).
const TOKEN_TTL = 3600;

// Hull's example read JWT_SECRET before env was configured, so it always
// signed with the fallback, silently. Cove reads env at load time; without
// JWT_SECRET the fallback is still used (tests, local runs), but loudly.
function loadSecret() {
  try {
    const secret = env.get("JWT_SECRET");
    if (typeof secret === "string" && secret !== "") return secret;
  } catch {
    // env not configured: fall through to the warning.
  }
  log.warn(
    "JWT_SECRET is not set: tokens are signed with a development secret anyone can read; " +
      "set JWT_SECRET before deploying",
  );
  return "change-me-in-production";
}

const SECRET = loadSecret();

const REGISTER = {
  email: { required: true, type: "string", trim: true, email: true },
  password: { required: true, type: "string", min: 8 },
  name: { required: true, type: "string", trim: true, max: 100 },
};
const LOGIN = {
  email: { required: true, type: "string", trim: true },
  password: { required: true, type: "string" },
};

// The request's JSON object, or null after answering 400.
function jsonBody(req, res) {
  try {
    const data = json.decode(req.body ?? "");
    if (typeof data === "object" && data !== null) return data;
  } catch {
    // answered below
  }
  res.json({ error: "invalid JSON" }, 400);
  return null;
}

const tokenFor = (userId, email) =>
  jwt.sign({ sub: userId, email, exp: time.now() + TOKEN_TTL }, SECRET);

// A valid Bearer token puts its claims in req.ctx.user; handlers that need a
// user answer 401 without one. (Middleware does not run under `cove test`
// unless a call asks for it, as in Hull.) A failed verify is an array.
app.use("*", "/*", (req) => {
  const token = /^[Bb]earer\s+(.+)$/.exec(req.header("authorization") ?? "")?.[1];
  if (token) {
    const claims = jwt.verify(token, SECRET);
    if (!Array.isArray(claims)) req.ctx.user = claims;
  }
  return 0;
});

function requireUser(req, res) {
  if (!req.ctx.user) {
    res.json({ error: "authentication required" }, 401);
    return null;
  }
  return req.ctx.user;
}

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.post("/register", async (req, res) => {
  const body = jsonBody(req, res);
  if (!body) return;
  const [ok, errors] = validate.check(body, REGISTER);
  if (!ok) return res.json({ errors }, 400);
  // The hash runs off the worker's thread; other requests go on meanwhile.
  const hash = await crypto.hashPasswordAsync(body.password);
  let id = null;
  db.batch(() => {
    if (db.query("SELECT id FROM users WHERE email = ?", [body.email]).length > 0) return;
    db.exec(
      "INSERT INTO users (email, password_hash, name, created_at) VALUES (?, ?, ?, ?)",
      [body.email, hash, body.name, time.now()],
    );
    id = db.lastId();
  });
  if (id === null) return res.json({ error: "email already registered" }, 409);
  res.json({ id, email: body.email, name: body.name }, 201);
});

app.post("/login", async (req, res) => {
  const body = jsonBody(req, res);
  if (!body) return;
  const [ok, errors] = validate.check(body, LOGIN);
  if (!ok) return res.json({ errors }, 400);
  const [user] = db.query(
    "SELECT id, email, name, password_hash FROM users WHERE email = ?",
    [body.email],
  );
  if (!user || !(await crypto.verifyPasswordAsync(body.password, user.password_hash))) {
    return res.json({ error: "invalid credentials" }, 401);
  }
  res.json({
    token: tokenFor(user.id, user.email),
    user: { id: user.id, email: user.email, name: user.name },
  });
});

app.get("/me", (req, res) => {
  const claims = requireUser(req, res);
  if (!claims) return;
  const [user] = db.query("SELECT id, email, name, created_at FROM users WHERE id = ?", [claims.sub]);
  if (!user) return res.json({ error: "user not found" }, 404);
  res.json(user);
});

app.post("/refresh", (req, res) => {
  const claims = requireUser(req, res);
  if (!claims) return;
  res.json({ token: tokenFor(claims.sub, claims.email) });
});
