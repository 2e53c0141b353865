-- hull.middleware.auth: session-cookie and JWT authentication (Hull §10.5,
-- Lua flavour: cookie `hull_session`, ctx keys `session`/`session_id` and
-- `user`).
--
--   app.use("*", "/*", auth.session_middleware({ optional = true }))
--   auth.login(req, res, { user_id = id })   -- in POST /login
--   auth.logout(req, res)                    -- in POST /logout
--
-- Sessions are rows in the database (hull.middleware.session), so a cookie
-- set by one worker (or process) is honoured by every other.

local cookie = require("hull.cookie")
local session = require("hull.middleware.session")

local auth = {}

local DEFAULT_COOKIE = "hull_session"

local function deny(res, message)
  res:json({ error = message }, 401)
  return 1
end

-- True if `path` is one of `patterns`: exact paths, or `/prefix/*` for
-- `/prefix` and everything under it.
local function excluded(path, patterns)
  for _, p in ipairs(patterns or {}) do
    local prefix = p:match("^(.*)/%*$")
    if path == p or (prefix and (path == prefix or path:sub(1, #prefix + 1) == prefix .. "/")) then
      return true
    end
  end
  return false
end

-- opts: cookie_name ("hull_session"), optional (false: requests without a
-- valid session get 401), login_path (redirect there instead of 401),
-- exclude_paths (as JS excludePaths: paths the middleware leaves alone).
-- A valid session sets req.ctx.session (its data) and req.ctx.session_id.
function auth.session_middleware(opts)
  opts = opts or {}
  local name = opts.cookie_name or DEFAULT_COOKIE
  return function(req, res)
    if excluded(req.path, opts.exclude_paths) then
      return 0
    end
    local id = cookie.parse(req.headers.cookie)[name]
    local data = id and session.load(id)
    if data then
      req.ctx.session = data
      req.ctx.session_id = id
      return 0
    end
    if opts.optional then
      return 0
    end
    if opts.login_path then
      res:redirect(opts.login_path)
      return 1
    end
    return deny(res, "authentication required")
  end
end

-- opts: secret (required), optional, exclude_paths. Expects
-- `Authorization: Bearer <jwt>`; a valid token sets req.ctx.user to its
-- payload.
function auth.jwt_middleware(opts)
  if type(opts) ~= "table" or not opts.secret then
    error("auth.jwt_middleware requires opts.secret", 2)
  end
  -- Loaded here so that session-only apps do not load the JWT module.
  local jwt = require("hull.jwt")
  return function(req, res)
    if excluded(req.path, opts.exclude_paths) then
      return 0
    end
    local header = req.headers.authorization
    if not header then
      return opts.optional and 0 or deny(res, "missing authorization header")
    end
    local token = header:match("^[Bb]earer%s+(.+)$")
    if not token then
      return opts.optional and 0 or deny(res, "invalid authorization format")
    end
    local payload, reason = jwt.verify(token, opts.secret)
    if not payload then
      return opts.optional and 0 or deny(res, reason)
    end
    req.ctx.user = payload
    return 0
  end
end

-- Start a session holding `user_data` and send its cookie → the session id.
-- opts: cookie_name, cookie_opts (hull.cookie options; default
-- Path=/; HttpOnly; Secure; SameSite=Lax). A session the request already
-- carried is ended first, so a planted session id never becomes a login.
function auth.login(req, res, user_data, opts)
  opts = opts or {}
  local name = opts.cookie_name or DEFAULT_COOKIE
  local old = cookie.parse(req.headers.cookie)[name]
  if old then
    session.destroy(old)
  end
  local id = session.create(user_data)
  res:header("Set-Cookie", cookie.serialize(name, id, opts.cookie_opts))
  return id
end

-- End the request's session and clear its cookie. opts as for login.
function auth.logout(req, res, opts)
  opts = opts or {}
  local name = opts.cookie_name or DEFAULT_COOKIE
  local id = cookie.parse(req.headers.cookie)[name] or req.ctx.session_id
  if id then
    session.destroy(id)
  end
  res:header("Set-Cookie", cookie.clear(name, opts.cookie_opts))
end

return auth
