-- cove test examples/auth — the cases run in order against one database.
-- By default only the route handler runs (as in Hull), so the routes that
-- need a session answer 401; `middleware = true` runs the session
-- middleware too, which is how the cookie flow is tested here.

local function post(path, body, opts)
  opts = opts or {}
  opts.body = json.encode(body)
  return test.post(path, opts)
end

local ANN = { email = "ann@example.com", password = "correct horse", name = "Ann" }

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("POST /register creates an account", function()
  local r = post("/register", ANN)
  test.eq(r.status, 201)
  test.eq(r.json, { id = 1, email = "ann@example.com", name = "Ann" })
  local row = db.query("SELECT password_hash FROM users WHERE id = 1")[1]
  test.ok(row.password_hash:find("^pbkdf2:100000:"), "the password is stored hashed")
end)

test("POST /register refuses a taken email", function()
  local r = post("/register", ANN)
  test.eq(r.status, 409)
  test.eq(r.json.error, "email already registered")
end)

test("POST /register validates its input", function()
  local r = post("/register", { email = "bob@example.com", password = "short", name = "Bob" })
  test.eq(r.status, 400)
  test.eq(r.json.errors.password, "must be at least 8 characters")
  r = post("/register", { email = "not-an-email", password = "long enough" })
  test.eq(r.json.errors, { email = "is not a valid email", name = "is required" })
  test.eq(test.post("/register", { body = "{" }).json, { error = "invalid JSON" })
end)

test("GET /me without a session is 401", function()
  test.eq(test.get("/me").status, 401)
  test.eq(test.post("/logout").json, { error = "authentication required" })
end)

test("POST /login refuses wrong credentials", function()
  local r = post("/login", { email = ANN.email, password = "wrong password" })
  test.eq(r.status, 401)
  test.eq(r.json, { error = "invalid credentials" })
  test.eq(post("/login", { email = "nobody@example.com", password = "whatever" }).status, 401)
  test.eq(post("/login", { email = ANN.email }).json.errors.password, "is required")
end)

test("login, me, logout with the session cookie", function()
  local r = post("/login", { email = ANN.email, password = ANN.password })
  test.eq(r.status, 200)
  test.eq(r.json, { id = 1, email = "ann@example.com", name = "Ann" })
  local set = r.headers["set-cookie"]
  test.ok(set:find("^hull_session=%x+; Path=/; HttpOnly; Secure; SameSite=Lax$"), set)
  local jar = { Cookie = set:match("^[^;]+") }

  local me = test.get("/me", { headers = jar, middleware = true })
  test.eq(me.status, 200)
  test.eq(me.json.email, "ann@example.com")
  test.eq(me.json.name, "Ann")

  local out = test.post("/logout", { headers = jar, middleware = true })
  test.eq(out.json, { ok = true })
  test.ok(out.headers["set-cookie"]:find("Max-Age=0", 1, true), "the cookie is cleared")
  test.eq(test.get("/me", { headers = jar, middleware = true }).status, 401)
end)
