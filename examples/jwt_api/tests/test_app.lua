-- cove test examples/jwt_api — the cases run in order against one database.
local jwt = require("hull.jwt")

local ANN = { email = "ann@example.com", password = "correct horse", name = "Ann" }

local function post(path, body, opts)
  opts = opts or {}
  opts.body = json.encode(body)
  return test.post(path, opts)
end

-- Calls that run the app's middleware, which reads the Bearer token.
local function as(token, method, path)
  return test[method](path, { headers = { Authorization = "Bearer " .. token }, middleware = true })
end

local token

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("POST /register creates a user", function()
  local r = post("/register", ANN)
  test.eq(r.status, 201)
  test.eq(r.json, { id = 1, email = ANN.email, name = "Ann" })
end)

test("POST /register stores a password hash, not the password", function()
  local row = db.query("SELECT password_hash FROM users WHERE id = 1")[1]
  test.ok(row.password_hash:find("^pbkdf2:"), row.password_hash)
  test.ok(crypto.verify_password(ANN.password, row.password_hash))
end)

test("POST /register validates its input", function()
  test.eq(test.post("/register", { body = "{" }).json, { error = "invalid JSON" })
  local r = post("/register", { email = "nope", password = "short" })
  test.eq(r.status, 400)
  test.eq(r.json.errors, {
    email = "is not a valid email", password = "must be at least 8 characters", name = "is required",
  })
end)

test("POST /register refuses a second account for an email", function()
  local r = post("/register", ANN)
  test.eq(r.status, 409)
  test.eq(r.json.error, "email already registered")
end)

test("POST /login refuses wrong credentials", function()
  test.eq(post("/login", { email = ANN.email, password = "wrong password" }).status, 401)
  local r = post("/login", { email = "bob@example.com", password = ANN.password })
  test.eq(r.status, 401)
  test.eq(r.json.error, "invalid credentials")
  test.eq(post("/login", {}).json.errors.email, "is required")
end)

test("POST /login returns a token and the user", function()
  local r = post("/login", { email = ANN.email, password = ANN.password })
  test.eq(r.status, 200)
  test.eq(r.json.user, { id = 1, email = ANN.email, name = "Ann" })
  token = r.json.token
  local claims = jwt.decode(token)
  test.eq(claims.sub, 1)
  test.eq(claims.email, ANN.email)
  test.eq(claims.exp - claims.iat, 3600)
end)

test("GET /me needs the middleware (handler-only calls are anonymous)", function()
  test.eq(test.get("/me").status, 401)
  test.eq(test.get("/me").json.error, "authentication required")
end)

test("GET /me with the Bearer token", function()
  local r = as(token, "get", "/me")
  test.eq(r.status, 200)
  test.eq(r.json.email, ANN.email)
  test.eq(r.json.name, "Ann")
end)

test("a tampered token is refused", function()
  local header, _, sig = token:match("^([^.]+)%.([^.]+)%.([^.]+)$")
  local forged = header .. "." .. crypto.base64url_encode('{"sub":2,"exp":4000000000}') .. "." .. sig
  test.eq(as(forged, "get", "/me").status, 401)
  test.eq(as(token .. "x", "post", "/refresh").status, 401)
end)

test("POST /refresh issues a new token for the same user", function()
  test.eq(test.post("/refresh").status, 401)
  local r = as(token, "post", "/refresh")
  test.eq(r.status, 200)
  local claims = jwt.decode(r.json.token)
  test.eq(claims.sub, 1)
  test.eq(as(r.json.token, "get", "/me").json.id, 1)
end)
