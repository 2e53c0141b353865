// cove test examples/jwt_api — the cases run in order against one database.
import { crypto } from "hull:crypto";
import { db } from "hull:db";
import { jwt } from "hull:jwt";

const ANN = { email: "ann@example.com", password: "correct horse", name: "Ann" };

const post = (path, body) => test.post(path, { body: JSON.stringify(body) });

// Calls that run the app's middleware, which reads the Bearer token.
const as = (token, method, path) =>
  test[method](path, { headers: { Authorization: `Bearer ${token}` }, middleware: true });

let token;

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("POST /register creates a user", () => {
  const r = post("/register", ANN);
  test.eq(r.status, 201);
  test.eq(r.json, { id: 1, email: ANN.email, name: "Ann" });
});

test("POST /register stores a password hash, not the password", () => {
  const [row] = db.query("SELECT password_hash FROM users WHERE id = 1");
  test.ok(row.password_hash.startsWith("pbkdf2:"), row.password_hash);
  test.ok(crypto.verifyPassword(ANN.password, row.password_hash));
});

test("POST /register validates its input", () => {
  test.eq(test.post("/register", { body: "{" }).json, { error: "invalid JSON" });
  const r = post("/register", { email: "nope", password: "short" });
  test.eq(r.status, 400);
  test.eq(r.json.errors, {
    email: "is not a valid email", password: "must be at least 8 characters", name: "is required",
  });
});

test("POST /register refuses a second account for an email", () => {
  const r = post("/register", ANN);
  test.eq(r.status, 409);
  test.eq(r.json.error, "email already registered");
});

test("POST /login refuses wrong credentials", () => {
  test.eq(post("/login", { email: ANN.email, password: "wrong password" }).status, 401);
  const r = post("/login", { email: "bob@example.com", password: ANN.password });
  test.eq(r.status, 401);
  test.eq(r.json.error, "invalid credentials");
  test.eq(post("/login", {}).json.errors.email, "is required");
});

test("POST /login returns a token and the user", () => {
  const r = post("/login", { email: ANN.email, password: ANN.password });
  test.eq(r.status, 200);
  test.eq(r.json.user, { id: 1, email: ANN.email, name: "Ann" });
  token = r.json.token;
  const claims = jwt.decode(token);
  test.eq(claims.sub, 1);
  test.eq(claims.email, ANN.email);
  test.eq(claims.exp - claims.iat, 3600);
});

test("GET /me needs the middleware (handler-only calls are anonymous)", () => {
  test.eq(test.get("/me").status, 401);
  test.eq(test.get("/me").json.error, "authentication required");
});

test("GET /me with the Bearer token", () => {
  const r = as(token, "get", "/me");
  test.eq(r.status, 200);
  test.eq(r.json.email, ANN.email);
  test.eq(r.json.name, "Ann");
});

test("a tampered token is refused", () => {
  const [header, , sig] = token.split(".");
  const forged = `${header}.${crypto.base64urlEncode('{"sub":2,"exp":4000000000}')}.${sig}`;
  test.eq(as(forged, "get", "/me").status, 401);
  test.eq(as(`${token}x`, "post", "/refresh").status, 401);
});

test("POST /refresh issues a new token for the same user", () => {
  test.eq(test.post("/refresh").status, 401);
  const r = as(token, "post", "/refresh");
  test.eq(r.status, 200);
  test.eq(jwt.decode(r.json.token).sub, 1);
  test.eq(as(r.json.token, "get", "/me").json.id, 1);
});
