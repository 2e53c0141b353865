// cove test examples/auth — the cases run in order against one database.
// By default only the route handler runs (as in Hull), so the routes that
// need a session answer 401; `middleware: true` runs the session
// middleware too, which is how the cookie flow is tested here.

import { db } from "hull:db";

const post = (path, body, opts = {}) => test.post(path, { ...opts, body: JSON.stringify(body) });

const ANN = { email: "ann@example.com", password: "correct horse", name: "Ann" };

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("POST /register creates an account", () => {
  const r = post("/register", ANN);
  test.eq(r.status, 201);
  test.eq(r.json, { id: 1, email: "ann@example.com", name: "Ann" });
  const [row] = db.query("SELECT password_hash FROM users WHERE id = 1");
  test.ok(row.password_hash.startsWith("pbkdf2:100000:"), "the password is stored hashed");
});

test("POST /register refuses a taken email", () => {
  const r = post("/register", ANN);
  test.eq(r.status, 409);
  test.eq(r.json.error, "email already registered");
});

test("POST /register validates its input", () => {
  let r = post("/register", { email: "bob@example.com", password: "short", name: "Bob" });
  test.eq(r.status, 400);
  test.eq(r.json.errors.password, "must be at least 8 characters");
  r = post("/register", { email: "not-an-email", password: "long enough" });
  test.eq(r.json.errors, { email: "is not a valid email", name: "is required" });
  test.eq(test.post("/register", { body: "{" }).json, { error: "invalid JSON" });
});

test("GET /me without a session is 401", () => {
  test.eq(test.get("/me").status, 401);
  test.eq(test.post("/logout").json, { error: "authentication required" });
});

test("POST /login refuses wrong credentials", () => {
  const r = post("/login", { email: ANN.email, password: "wrong password" });
  test.eq(r.status, 401);
  test.eq(r.json, { error: "invalid credentials" });
  test.eq(post("/login", { email: "nobody@example.com", password: "whatever" }).status, 401);
  test.eq(post("/login", { email: ANN.email }).json.errors.password, "is required");
});

test("login, me, logout with the session cookie", () => {
  const r = post("/login", { email: ANN.email, password: ANN.password });
  test.eq(r.status, 200);
  test.eq(r.json, { id: 1, email: "ann@example.com", name: "Ann" });
  const set = r.headers["set-cookie"];
  test.ok(/^hull\.sid=[0-9a-f]{64}; Path=\/; HttpOnly; Secure; SameSite=Lax$/.test(set), set);
  const jar = { Cookie: set.split(";")[0] };

  const me = test.get("/me", { headers: jar, middleware: true });
  test.eq(me.status, 200);
  test.eq(me.json.email, "ann@example.com");
  test.eq(me.json.name, "Ann");

  const out = test.post("/logout", { headers: jar, middleware: true });
  test.eq(out.json, { ok: true });
  test.ok(out.headers["set-cookie"].includes("Max-Age=0"), "the cookie is cleared");
  test.eq(test.get("/me", { headers: jar, middleware: true }).status, 401);
});
