-- jwt_api: register, log in, then call the API with a Bearer token
-- (hull.jwt, HS256). Passwords are stored as PBKDF2 hashes.
--
--   JWT_SECRET=$(openssl rand -hex 32) cove -p 8080 -d users.db examples/jwt_api/app.lua
--   curl -X POST localhost:8080/register -d '{"email":"ann@example.com","password":"correct horse","name":"Ann"}'
--   curl -X POST localhost:8080/login -d '{"email":"ann@example.com","password":"correct horse"}'
--   curl -H "Authorization: Bearer <token>" localhost:8080/me

local jwt = require("hull.jwt")
local validate = require("hull.validate")

app.manifest({ env = { "JWT_SECRET" } })

-- Tokens are valid for an hour; an `exp` below 2e9 is relative in hull.jwt.
local TOKEN_TTL = 3600

-- Hull's example read JWT_SECRET before env was configured, so it always
-- signed with the fallback, silently. Cove reads env at load time; without
-- JWT_SECRET the fallback is still used (tests, local runs), but loudly.
local function load_secret()
  local ok, secret = pcall(env.get, "JWT_SECRET")
  if ok and type(secret) == "string" and secret ~= "" then
    return secret
  end
  log.warn("JWT_SECRET is not set: tokens are signed with a development secret anyone can read; "
    .. "set JWT_SECRET before deploying")
  return "change-me-in-production"
end

local SECRET = load_secret()

local REGISTER = {
  email = { required = true, type = "string", trim = true, email = true },
  password = { required = true, type = "string", min = 8 },
  name = { required = true, type = "string", trim = true, max = 100 },
}
local LOGIN = {
  email = { required = true, type = "string", trim = true },
  password = { required = true, type = "string" },
}

-- The request's JSON object, or nil after answering 400.
local function json_body(req, res)
  local ok, data = pcall(json.decode, req.body)
  if ok and type(data) == "table" then
    return data
  end
  res:json({ error = "invalid JSON" }, 400)
  return nil
end

local function token_for(user_id, email)
  return jwt.sign({ sub = user_id, email = email, exp = TOKEN_TTL }, SECRET)
end

-- A valid Bearer token puts its claims in req.ctx.user; handlers that need a
-- user answer 401 without one. (Middleware does not run under `cove test`
-- unless a call asks for it, as in Hull.)
app.use("*", "/*", function(req, res)
  local token = (req.headers.authorization or ""):match("^[Bb]earer%s+(.+)$")
  if token then
    req.ctx.user = jwt.verify(token, SECRET)
  end
  return 0
end)

local function require_user(req, res)
  if not req.ctx.user then
    res:json({ error = "authentication required" }, 401)
    return nil
  end
  return req.ctx.user
end

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.post("/register", function(req, res)
  local body = json_body(req, res)
  if not body then
    return
  end
  local ok, errors = validate.check(body, REGISTER)
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  -- Hash first: it takes a while, and the worker serves others meanwhile.
  local hash = crypto.hash_password(body.password)
  local id
  db.batch(function()
    if db.query("SELECT id FROM users WHERE email = ?", { body.email })[1] then
      return
    end
    db.exec("INSERT INTO users (email, password_hash, name, created_at) VALUES (?, ?, ?, ?)",
      { body.email, hash, body.name, time.now() })
    id = db.last_id()
  end)
  if not id then
    return res:json({ error = "email already registered" }, 409)
  end
  res:json({ id = id, email = body.email, name = body.name }, 201)
end)

app.post("/login", function(req, res)
  local body = json_body(req, res)
  if not body then
    return
  end
  local ok, errors = validate.check(body, LOGIN)
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  local user = db.query("SELECT id, email, name, password_hash FROM users WHERE email = ?", { body.email })[1]
  if not user or not crypto.verify_password(body.password, user.password_hash) then
    return res:json({ error = "invalid credentials" }, 401)
  end
  res:json({
    token = token_for(user.id, user.email),
    user = { id = user.id, email = user.email, name = user.name },
  })
end)

app.get("/me", function(req, res)
  local claims = require_user(req, res)
  if not claims then
    return
  end
  local user = db.query("SELECT id, email, name, created_at FROM users WHERE id = ?", { claims.sub })[1]
  if not user then
    return res:json({ error = "user not found" }, 404)
  end
  res:json(user)
end)

app.post("/refresh", function(req, res)
  local claims = require_user(req, res)
  if not claims then
    return
  end
  res:json({ token = token_for(claims.sub, claims.email) })
end)
