-- The middleware stdlib (hull.middleware.*) under test: the Lua half of the
-- app pair driven by ../specs/stdlib_middleware*.toml and by
-- crates/cove/tests/shared_stdlib.rs (two workers).

local cors = require("hull.middleware.cors")
local ratelimit = require("hull.middleware.ratelimit")
local logger = require("hull.middleware.logger")
local session = require("hull.middleware.session")
local auth = require("hull.middleware.auth")
local csrf = require("hull.middleware.csrf")
local transaction = require("hull.middleware.transaction")

-- Names this worker's VM, so tests can tell that several workers answered.
local VM = string.format("%08x", string.unpack("<I4", crypto.random(4)))
app.use("*", "/*", function(req, res)
  res:header("X-VM", VM)
  return 0
end)

session.init({ ttl = 3600 })

-- A window of 10^9 s (2001–2033) never rolls over during a test run.
local LONG = 1000000000

-- cors ----------------------------------------------------------------------
app.use("*", "/cors/*", cors.middleware({
  origins = { "http://good.example", "http://also.example" },
  credentials = true,
  max_age = 600,
}))
app.use("*", "/cors-any/*", cors.middleware())
app.get("/cors/data", function(req, res) res:json({ ok = true }) end)
app.get("/cors-any/data", function(req, res) res:json({ ok = true }) end)
app.get("/cors-check", function(req, res)
  local list = { "http://a.example" }
  res:json({
    listed = cors.is_allowed_origin("http://a.example", list),
    unlisted = cors.is_allowed_origin("http://b.example", list),
    star = cors.is_allowed_origin("http://b.example", { "*" }),
  })
end)

-- ratelimit -----------------------------------------------------------------
app.use("*", "/rl/global", ratelimit.middleware({ limit = 3, window = LONG }))
app.use("*", "/rl/keyed", ratelimit.middleware({
  limit = 1, window = LONG,
  key = function(req) return req.headers["x-client"] end,
}))
app.use("*", "/rl/shared", ratelimit.middleware({ limit = 10, window = LONG, name = "shared" }))
app.use("*", "/rl/few-keys", ratelimit.middleware({
  limit = 5, window = LONG, max_keys = 2,
  key = function(req) return req.headers["x-client"] end,
}))
local function ok(req, res) res:json({ ok = true }) end
app.get("/rl/global", ok)
app.get("/rl/keyed", ok)
app.get("/rl/shared", ok)
app.get("/rl/few-keys", ok)
app.get("/rl-check", function(req, res)
  local buckets, n = {}, nil
  local seen = {}
  for _, now in ipairs({ 1000, 1001, 1002, 1020 }) do
    local r
    r, n = ratelimit.check(buckets, "k", 2, 60, now, n)
    seen[#seen + 1] = r
  end
  res:json({ results = seen, buckets = n })
end)

-- logger --------------------------------------------------------------------
app.use("*", "/log/*", logger.middleware({ skip = { "/log/skip" }, include_headers = { "X-Trace" } }))
local function show_id(req, res)
  res:json({ request_id = req.ctx.request_id or false })
end
app.get("/log/a", show_id)
app.post("/log/a", show_id)
app.get("/log/skip", show_id)
app.get("/log-format", function(req, res)
  res:json({
    line = logger.format_line({
      { "plain", "abc" }, { "n", 42 }, { "space", "a b" }, { "eq", "x=y" },
      { "quote", 'say "hi"' }, { "nl", "1\n2" }, { "slash", "a\\b" },
    }),
    skip = logger.should_skip("/health", { "/health" }),
    keep = logger.should_skip("/healthz", { "/health" }),
  })
end)

-- session -------------------------------------------------------------------
app.get("/session/lifecycle", function(req, res)
  local id = session.create({ user = "ann", n = 1 })
  local first = session.load(id)
  local updated = session.update(id, { user = "ann", n = 2 })
  local second = session.load(id)
  local destroyed = session.destroy(id)
  res:json({
    id_is_hex64 = id:match("^%x+$") ~= nil and #id == 64,
    ids_differ = session.create({}) ~= session.create({}),
    first = first, updated = updated, second = second, destroyed = destroyed,
    gone = session.load(id) == nil,
    destroyed_again = session.destroy(id),
    update_gone = session.update(id, {}),
    unknown = session.load("no-such-session") == nil,
  })
end)
app.get("/session/load", function(req, res)
  local data = session.load(req.query.id)
  res:json({ found = data ~= nil, data = data or false })
end)
app.post("/session/cleanup", function(req, res)
  res:json({ removed = session.cleanup() })
end)

-- auth ----------------------------------------------------------------------
app.use("*", "/me/*", auth.session_middleware({ exclude_paths = { "/me/public", "/me/open/*" } }))
app.use("*", "/opt/*", auth.session_middleware({ optional = true }))
app.use("*", "/members/*", auth.session_middleware({ login_path = "/login" }))
app.use("*", "/jwt/*", auth.jwt_middleware({ secret = "conformance-secret" }))
app.use("*", "/jwt-opt/*", auth.jwt_middleware({ secret = "conformance-secret", optional = true }))
local function show_ctx(req, res) res:json(req.ctx) end
app.get("/me/ctx", show_ctx)
app.get("/opt/ctx", function(req, res)
  res:json({ logged_in = req.ctx.session ~= nil })
end)
app.get("/members/page", show_ctx)
app.get("/jwt/ctx", show_ctx)
app.get("/me/public", function(req, res) res:json({ public = true }) end)
app.get("/me/open/page", function(req, res) res:json({ public = true }) end)
app.get("/jwt-opt/ctx", function(req, res)
  res:json({ authenticated = req.ctx.user ~= nil })
end)
app.post("/auth/login", function(req, res)
  local id = auth.login(req, res, { user_id = 7 })
  res:json({ id_is_hex64 = #id == 64, loaded = session.load(id) })
end)
app.post("/auth/logout", function(req, res)
  auth.logout(req, res)
  res:json({ ok = true })
end)

-- csrf ----------------------------------------------------------------------
local CSRF_SECRET = "conformance-csrf-secret"
app.use("*", "/csrf/*", auth.session_middleware({ optional = true }))
app.use_post("*", "/csrf/*", csrf.middleware({ secret = CSRF_SECRET }))
app.get("/csrf/form", function(req, res)
  res:json({ token = req.ctx.csrf_token or false })
end)
app.post("/csrf/submit", function(req, res) res:json({ accepted = true }) end)
app.get("/csrf-check", function(req, res)
  local t = csrf.generate("sid-1", CSRF_SECRET)
  res:json({
    valid = csrf.verify(t, "sid-1", CSRF_SECRET),
    other_session = csrf.verify(t, "sid-2", CSRF_SECRET),
    other_secret = csrf.verify(t, "sid-1", "another-secret"),
    tampered = csrf.verify(t:sub(1, -2) .. (t:sub(-1) == "0" and "1" or "0"), "sid-1", CSRF_SECRET),
    expired = csrf.verify(t, "sid-1", CSRF_SECRET, -1),
    garbage = csrf.verify("not-a-token", "sid-1", CSRF_SECRET),
    missing = csrf.verify(nil, "sid-1", CSRF_SECRET),
  })
end)

-- transaction ---------------------------------------------------------------
app.use_post("POST", "/txn/*", transaction.middleware())
local function count_notes()
  return db.query("SELECT count(*) AS n FROM notes")[1].n
end
app.post("/txn/run", function(req, res)
  local result = transaction.run(function()
    db.exec("INSERT INTO notes (title) VALUES ('a')")
    db.exec("INSERT INTO notes (title) VALUES ('b')")
    return "done"
  end)
  res:json({ result = result, notes = count_notes(), marked = req.ctx._txn == true })
end)
app.post("/txn/attempt", function(req, res)
  local ok, err = transaction.try(function()
    db.exec("INSERT INTO notes (title) VALUES ('c')")
    error("boom")
  end)
  res:json({ ok = ok, error_says_boom = tostring(err):find("boom") ~= nil, notes = count_notes() })
end)
app.post("/txn/run-fails", function(req, res)
  transaction.run(function()
    db.exec("INSERT INTO notes (title) VALUES ('d')")
    error("boom")
  end)
end)
