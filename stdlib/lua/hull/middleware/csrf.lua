-- hull.middleware.csrf: tokens that tie a form post to its session (Hull
-- §10.3, Lua flavour: the session id comes from req.ctx, tokens are
-- `<hex of the decimal time>.<hmac>`, a bad token is 403
-- {"error":"csrf: invalid token"}).
--
--   app.use("*", "/*", auth.session_middleware({ optional = true }))
--   app.use_post("*", "/*", csrf.middleware({ secret = CSRF_SECRET }))
--   -- pages put req.ctx.csrf_token in a hidden `_csrf` field
--
-- The secret must be the same in every worker: take it from env or a
-- constant, not from crypto.random at load (each worker loads the app).

local csrf = {}

local function hex(s)
  return (s:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

local function unhex(h)
  return (h:gsub("%x%x", function(b)
    return string.char(tonumber(b, 16))
  end))
end

local function mac(session_id, ts, secret)
  return crypto.hmac_sha256(session_id .. ":" .. ts, hex(secret))
end

-- A token for `session_id`, valid for max_age seconds from now.
function csrf.generate(session_id, secret)
  local ts = tostring(time.now())
  return hex(ts) .. "." .. mac(session_id, ts, secret)
end

-- True if `token` was made for `session_id` with `secret` no more than
-- max_age (3600) seconds ago. Tokens dated more than a minute ahead are
-- refused too.
function csrf.verify(token, session_id, secret, max_age)
  if type(token) ~= "string" or type(session_id) ~= "string" or type(secret) ~= "string" then
    return false
  end
  local ts_hex, tag = token:match("^(%x+)%.(%x+)$")
  if not ts_hex or #ts_hex % 2 ~= 0 or #ts_hex > 32 or #tag ~= 64 then
    return false
  end
  local ts = unhex(ts_hex)
  if not ts:match("^%d+$") then
    return false
  end
  local age = time.now() - tonumber(ts)
  if age > (max_age or 3600) or age < -60 then
    return false
  end
  return crypto.hmac_sha256_verify(session_id .. ":" .. ts, hex(secret), tag:lower())
end

local function decode(s)
  s = s:gsub("%+", " ")
  return (s:gsub("%%(%x%x)", function(h)
    return string.char(tonumber(h, 16))
  end))
end

-- The value of `field` in a form-encoded body, or nil.
local function form_field(body, field)
  if type(body) ~= "string" then
    return nil
  end
  for pair in body:gmatch("[^&]+") do
    local k, v = pair:match("^([^=]*)=(.*)$")
    if k and decode(k) == field then
      return decode(v)
    end
  end
  return nil
end

-- Post-body middleware. opts: secret (required), session_key ("session_id",
-- read from req.ctx), max_age (3600), safe_methods (GET, HEAD, OPTIONS),
-- header_name ("x-csrf-token"), field_name ("_csrf").
-- Safe methods get a fresh req.ctx.csrf_token; other methods of a request
-- with a session need a valid token in the header or the form field.
function csrf.middleware(opts)
  if type(opts) ~= "table" or not opts.secret then
    error("csrf.middleware requires opts.secret", 2)
  end
  local secret = opts.secret
  local session_key = opts.session_key or "session_id"
  local max_age = opts.max_age or 3600
  local header_name = (opts.header_name or "x-csrf-token"):lower()
  local field_name = opts.field_name or "_csrf"
  local safe = {}
  for _, m in ipairs(opts.safe_methods or { "GET", "HEAD", "OPTIONS" }) do
    safe[m] = true
  end

  return function(req, res)
    local session_id = req.ctx[session_key]
    if safe[req.method] then
      if session_id then
        req.ctx.csrf_token = csrf.generate(session_id, secret)
      end
      return 0
    end
    if not session_id then
      return 0 -- nothing to forge without a session
    end
    local token = req.headers[header_name] or form_field(req.body, field_name)
    if not csrf.verify(token, session_id, secret, max_age) then
      res:json({ error = "csrf: invalid token" }, 403)
      return 1
    end
    return 0
  end
end

return csrf
