-- The Lua half of the conformance app: route for route the same behaviour
-- as app.js. The specs in ../specs/*.toml drive both.

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- What `pcall(f)` caught, as JS's `e.message` reads: a string positioned at
-- the calling line (`app.lua:12: `, required and removed here), no
-- "runtime error:", no traceback.
local function caught(f)
  local ok, err = pcall(f)
  if ok then return { ok = true } end
  if type(err) ~= "string" then return { ok = false, error_type = type(err) } end
  local msg, located = err:gsub("^app%.lua:%d+: ", "", 1)
  return { ok = false, message = located == 1 and msg or ("not located: " .. err) }
end

-- Routing -----------------------------------------------------------------
app.get("/users/:id", function(req, res) res:json({ id = req.params.id }) end)
app.get("/users/:id/posts/:post", function(req, res)
  res:json({ id = req.params.id, post = req.params.post })
end)
app.get("/order/first", function(req, res) res:text("literal route") end)
app.get("/order/:x", function(req, res) res:text("param route " .. req.params.x) end)
app.get("/whoami", function(req, res) res:json({ method = req.method, path = req.path }) end)
app.delete("/things/:id", function(req, res) res:json({ deleted = req.params.id }) end)
app.put("/things/:id", function(req, res) res:json({ put = req.params.id }) end)
app.patch("/things/:id", function(req, res) res:json({ patched = req.params.id }) end)
app.options("/things/:id", function(req, res) res:status(204) end)

-- Middleware --------------------------------------------------------------
app.use("*", "/mw/*", function(req, res)
  res:header("X-Pre", "1")
  req.ctx.trace = { "pre1" }
  return 0
end)
app.use("*", "/mw/*", function(req, res)
  local trace = req.ctx.trace
  trace[#trace + 1] = "pre2"
  return false
end)
app.use("GET", "/mw/stop", function(req, res)
  res:status(403)
  res:text("stopped by pre")
  return 1
end)
app.use_post("*", "/mw/*", function(req, res)
  local trace = req.ctx.trace
  trace[#trace + 1] = "post"
  res:header("X-Post", "1")
  return nil
end)
app.use_post("POST", "/mw/stop-post", function(req, res)
  res:status(401)
  res:text("stopped by post")
  return true
end)
app.get("/mw/trace", function(req, res) res:json({ trace = req.ctx.trace }) end)
app.get("/mw/stop", function(req, res) res:text("handler must not run") end)
app.post("/mw/stop-post", function(req, res) res:text("handler must not run") end)
app.use("*", "/mwerr/*", function(req, res)
  res:header("X-Before-Error", "kept")
  error("middleware boom")
end)
app.get("/mwerr/x", function(req, res) res:text("handler must not run") end)

-- Responses ---------------------------------------------------------------
app.get("/res/status", function(req, res)
  res:status(201)
  res:json({ created = true })
end)
app.get("/res/json-code", function(req, res) res:json({ accepted = true }, 202) end)
app.get("/res/text", function(req, res) res:text("plain text") end)
app.get("/res/html", function(req, res) res:html("<h1>hi</h1>") end)
app.get("/res/redirect", function(req, res) res:redirect("/target") end)
app.get("/res/redirect-303", function(req, res) res:redirect("/other", 303) end)
app.get("/res/headers", function(req, res)
  res:header("X-One", "1")
  res:header("Set-Cookie", "a=1")
  res:header("Set-Cookie", "b=2")
  res:text("headers")
end)
app.get("/res/content-type", function(req, res)
  res:header("Content-Type", "application/vnd.cove+json")
  res:json({ typed = true })
end)
app.get("/res/chain", function(req, res)
  res:status(202):header("X-Chain", "yes"):text("chained")
end)
app.get("/res/no-content", function(req, res) res:status(204) end)
app.get("/status/:code", function(req, res)
  res:status(tonumber(req.params.code))
  res:text("status " .. req.params.code)
end)

-- Requests ----------------------------------------------------------------
app.get("/query", function(req, res)
  local n = 0
  for _ in pairs(req.query) do n = n + 1 end
  res:json({ count = n, query = req.query })
end)
-- No middleware ran: ctx is still an empty table, the same at every read.
app.get("/ctx/fresh", function(req, res)
  local ctx = req.ctx
  ctx.n = 1
  res:json({ table = type(ctx) == "table", same = req.ctx == ctx, n = req.ctx.n })
end)
app.get("/headers", function(req, res)
  res:json({ custom = req.headers["x-custom"], dup = req.headers["x-dup"] })
end)
-- The whole req, none of its fields read first.
app.post("/req/whole/:id", function(req, res) res:json(req) end)
app.post("/req/encoded/:id", function(req, res) res:text(json.encode(req)) end)
app.post("/req/nested/:id", function(req, res) res:json({ list = { req } }) end)
app.post("/echo", function(req, res)
  if req.body == nil then return res:text("<nil>") end
  res:text(req.body)
end)
app.post("/body-size", function(req, res) res:json({ size = #(req.body or "") }) end)

-- Database ----------------------------------------------------------------
app.post("/db/types", function(req, res)
  db.exec("INSERT INTO kinds (i, f, t, b, n) VALUES (42, 1.5, 'text ✓', x'00ff41', NULL)")
  res:json({ id = db.last_id() })
end)
app.get("/db/types", function(req, res)
  local row = db.query("SELECT i, f, t, b, n FROM kinds WHERE b IS NOT NULL ORDER BY id DESC LIMIT 1")[1]
  res:json({
    i = row.i, i_is_integer = math.type(row.i) == "integer",
    f = row.f, t = row.t, b = hex(row.b), n_missing = row.n == nil,
  })
end)
app.post("/db/bind", function(req, res)
  db.exec("INSERT INTO kinds (i, f, t) VALUES (?, ?, ?)", { 7, 2.25, "seven" })
  local row = db.query("SELECT typeof(?) AS yes, ? AS yes_value, typeof(?) AS absent", { true, true, nil })[1]
  res:json({ id = db.last_id(), yes = row.yes, yes_value = row.yes_value, absent = row.absent })
end)
app.post("/db/update", function(req, res)
  res:json({ changed = db.exec("UPDATE kinds SET t = ? WHERE i = ?", { "updated", 42 }) })
end)
app.post("/notes", function(req, res)
  db.exec("INSERT INTO notes (title) VALUES (?)", { req.body })
  res:json({ id = db.last_id() }, 201)
end)
app.post("/db/batch-ok", function(req, res)
  db.batch(function()
    db.exec("INSERT INTO notes (title) VALUES ('batch 1')")
    db.exec("INSERT INTO notes (title) VALUES ('batch 2')")
  end)
  res:json({ count = db.query("SELECT COUNT(*) AS n FROM notes")[1].n })
end)
app.post("/db/batch-fail", function(req, res)
  local ok = pcall(db.batch, function()
    db.exec("INSERT INTO notes (title) VALUES ('rolled back')")
    error("batch boom")
  end)
  res:json({ ok = ok, count = db.query("SELECT COUNT(*) AS n FROM notes")[1].n })
end)
app.get("/db/big", function(req, res)
  res:json(db.query("SELECT 4611686018427387904 AS big, -9007199254740993 AS neg")[1])
end)
app.get("/db/error", function(req, res)
  local ok, err = pcall(db.query, "SELECT * FROM no_such_table")
  res:json({ ok = ok, mentions_table = tostring(err):find("no_such_table", 1, true) ~= nil })
end)
app.get("/db/reserved", function(req, res)
  local ok, err = pcall(db.query, "SELECT * FROM _hull_migrations")
  res:json({ ok = ok, reserved = tostring(err):find("_hull_", 1, true) ~= nil })
end)
app.get("/db/params", function(req, res)
  -- A nil in the parameters binds NULL in its place, whatever border # picks.
  local holes = db.query("SELECT ? AS a, typeof(?) AS b, ? AS c", { "x", nil, "z" })[1]
  local ok, err = pcall(db.query, 42)
  -- A query result (kept packed until read) passed on is its rows: here
  -- rows where values belong.
  local rows = db.query("SELECT 1 AS n UNION ALL SELECT 2 AS n")
  local ok2, err2 = pcall(db.query, "SELECT ? AS n", rows)
  res:json({
    holes = holes,
    refused = not ok,
    code = err:code(),
    message = tostring(err):find("db.query: the SQL must be a string, got number", 1, true) ~= nil,
    rows_refused = not ok2 and tostring(err2):find("parameter 1 is a table", 1, true) ~= nil,
  })
end)

-- JSON ----------------------------------------------------------------------
app.get("/json/empty", function(req, res) res:json({}) end)
app.get("/json/empty-array", function(req, res) res:json({}) end)
app.get("/json/nested", function(req, res)
  res:json({ a = { b = { c = { 1, 2, { d = "e" } } } }, list = { "x", "y" } })
end)
app.get("/json/unicode", function(req, res)
  res:json({ s = "héllo ✓ 日本 😀", esc = "quote\" back\\ nl\n tab\t ctl\1" })
end)
app.get("/json/numbers", function(req, res)
  res:json({ int = 42, neg = -7, tenth = 0.1, half = 1.5, huge = 1e300, third = 1 / 3, three = 3.0 })
end)
app.get("/json/bool-null", function(req, res) res:json({ yes = true, no = false, list = { true, false } }) end)
-- time (Hull §6.2): what every value looks like; the values themselves move.
app.get("/time", function(req, res)
  local now, ms, clock = time.now(), time.now_ms(), time.clock()
  local date, datetime = time.date(), time.datetime()
  res:json({
    integers = math.type(now) == "integer" and math.type(ms) == "integer"
      and math.type(clock) == "integer",
    ms_agrees = math.abs(ms // 1000 - now) <= 1,
    clock_runs = clock >= 0,
    date = date:match("^%d%d%d%d%-%d%d%-%d%d$") ~= nil,
    datetime = datetime:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%dZ$") ~= nil,
    recent = now > 1700000000,
  })
end)
app.post("/json/roundtrip", function(req, res)
  res:text(json.encode(json.decode(req.body)))
end)
app.post("/json/bad", function(req, res)
  local ok = pcall(json.decode, req.body)
  res:json({ ok = ok })
end)
app.get("/json/failures", function(req, res)
  local function failure(f, arg)
    local ok, err = pcall(f, arg)
    if ok then return "no error" end
    return (tostring(err):gsub("^[^:]*:%d+: ", "")), err:code() or false
  end
  local cycle = {}
  cycle.t = cycle
  local out = {}
  out.cycle, out.cycle_code = failure(json.encode, cycle)
  out.bad = select(2, failure(json.decode, "{bad"))
  out.number, out.number_code = failure(json.decode, 5)
  out.res_cycle, out.res_cycle_code = failure(function(t) res:json(t) end, cycle)
  res:json(out)
end)

-- Errors and limits -----------------------------------------------------------
app.get("/error/handler", function(req, res)
  res:header("X-Before-Error", "kept")
  error("handler boom")
end)
app.get("/error/bad-status", function(req, res) res:status(1000) end)
app.get("/loop", function(req, res)
  while true do end
end)
app.get("/loop-caught", function(req, res)
  while true do
    pcall(function() while true do end end)
  end
end)

-- crypto (Hull §6.5) -------------------------------------------------------------
local KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
local NONCE = "000102030405060708090a0b0c0d0e0f1011121314151617"
local RFC8032_SK = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
  .. "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
local RFC8032_PK = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
app.get("/crypto/vectors", function(req, res)
  local sig = crypto.ed25519_sign("", RFC8032_SK)
  local box_ct = crypto.box("hello, cove", NONCE,
    "ce8d3ad1ccb633ec7b70c17814a5c76ecd029685050d344745ba05870e587d59", string.rep("01", 32))
  res:json({
    sha256 = crypto.sha256("abc"),
    sha512_head = crypto.sha512("abc"):sub(1, 16),
    hmac = crypto.hmac_sha256("what do ya want for nothing?", "4a656665"),
    hmac_ok = crypto.hmac_sha256_verify("what do ya want for nothing?", "4a656665",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    auth = crypto.auth("hello, cove", KEY),
    secretbox = crypto.secretbox("hello, cove", NONCE, KEY),
    opened = crypto.secretbox_open("6c6e8a40d7976fd1a84e0706b6211683369a5423a8e68273d44aea", NONCE, KEY),
    tampered_is_nil = crypto.secretbox_open("7c6e8a40d7976fd1a84e0706b6211683369a5423a8e68273d44aea", NONCE, KEY) == nil,
    box = box_ct,
    box_opened = crypto.box_open(box_ct, NONCE,
      "a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209", string.rep("02", 32)),
    sig = sig,
    sig_ok = crypto.ed25519_verify("", sig, RFC8032_PK),
    sig_bad = crypto.ed25519_verify("x", sig, RFC8032_PK),
    b64 = crypto.base64url_encode(">>>???"),
    b64_back = crypto.base64url_decode("YWI"),
    b64_padded_is_nil = crypto.base64url_decode("YWI=") == nil,
  })
end)
app.get("/crypto/fresh", function(req, res)
  local hash = crypto.hash_password("hunter2")
  local pk, sk = crypto.ed25519_keypair()
  local bpk, bsk = crypto.box_keypair()
  res:json({
    hash_prefix = hash:sub(1, 14),
    hash_len = #hash,
    verify_ok = crypto.verify_password("hunter2", hash),
    verify_bad = crypto.verify_password("hunter3", hash),
    random_len = #crypto.random(16),
    keys = { #pk, #sk, #bpk, #bsk },
    signed = crypto.ed25519_verify("m", crypto.ed25519_sign("m", sk), pk),
  })
end)
app.get("/crypto/bad-nonce", function(req, res)
  res:text(crypto.secretbox("x", "00", KEY))
end)
app.get("/crypto/bad-random", function(req, res)
  res:text(crypto.random(0))
end)
app.get("/crypto/caught", function(req, res)
  res:json({
    nonce = caught(function() local _ = crypto.secretbox("x", "00", KEY) end),
    random = caught(function() local _ = crypto.random(0) end),
  })
end)
-- Data as bytes: Lua strings hold bytes (JS passes ArrayBuffers and views).
app.get("/crypto/bytes", function(req, res)
  local raw = "\0\1\2\255"
  res:json({
    b64 = crypto.base64url_encode(raw),
    sha256 = crypto.sha256(raw),
    sha256_u16 = crypto.sha256(raw),
    sha512_head = crypto.sha512(raw):sub(1, 16),
    hmac = crypto.hmac_sha256(raw, "4a656665"),
    random_b64_len = #crypto.base64url_encode(crypto.random(16)),
    random_sha_len = #crypto.sha256(crypto.random(16)),
  })
end)

-- app.* after load (Hull §3.1, §11.2) ---------------------------------------
app.get("/app/late-route", function(req, res)
  res:json(caught(function() app.get("/late", function() end) end))
end)
app.get("/app/late-manifest", function(req, res)
  res:json({
    manifest = caught(function() app.manifest({ hosts = { "127.0.0.1" }, env = { "HOME" } }) end),
    stored_is_nil = app.get_manifest() == nil,
    http = caught(function() local _ = http.get("http://127.0.0.1:9/") end),
    env = caught(function() local _ = env.get("HOME") end),
  })
end)

-- templates (Hull §7) ----------------------------------------------------------
local template = require("hull.template")
app.get("/tpl/page", function(req, res)
  res:html(template.render("conf/page.html", {
    title = "  Conf  ",
    html = "<i>&</i>",
    items = { { name = "a", n = 12 }, { name = "b", n = 0 }, { name = "c", n = 3 } },
  }))
end)
app.get("/tpl/string", function(req, res)
  res:text(template.render_string(
    "{{ \"{{ x }}\" }}|{% if a == 1 and (b != 'x' or c) %}yes{% end %}|{{ s | length }}|{{ n }}|{{- ' t ' -}}|",
    { a = 1, b = "y", s = "hello", n = 42 }))
end)
app.get("/tpl/bad", function(req, res)
  res:html(template.render("conf/bad.html", {}))
end)
app.get("/tpl/missing", function(req, res)
  res:html(template.render("conf/nope.html", {}))
end)

-- Registering routes and middleware (the capability table's `app.get`,
-- `app.use`): the same messages and codes in both runtimes, while the app
-- loads and from a handler, once it has loaded.
local function refusal(f, ...)
  local ok, err = pcall(f, ...)
  if ok then return "no error" end
  return { message = tostring(err), code = err:code() }
end
local registration = {
  pattern = refusal(app.get, 5, function() end),
  middleware = refusal(app.use, "GET", "/x", 5),
  invalid = refusal(app.get, "nope", function() end),
  method = refusal(app.use, "", "/x", function() end),
  manifest = refusal(app.manifest, { env = "HOME" }),
}
app.get("/errors/routes", function(req, res)
  registration.late = refusal(app.post, "/late", function() end)
  res:json(registration)
end)

-- Error codes (docs/api.md, "Error codes"): `err:code()` on what pcall
-- caught in Lua, `e.code` in JS; false where the error has none.
local kv = require("hull.kv")
app.get("/errors/codes", function(req, res)
  local function code(f)
    local ok, err = pcall(f)
    if ok then return "no error" end
    return err:code() or false
  end
  res:json({
    sql = code(function() return db.query("SELECT * FROM nowhere") end),
    constraint = code(function() return db.exec("INSERT INTO notes (title) VALUES (NULL)") end),
    reserved = code(function() return db.query("SELECT * FROM _hull_migrations") end),
    kv = code(function() return kv.set("", 1) end),
    kv_argument = code(function() return kv.incr("k", 1.5) end),
    crypto_input = code(function() return crypto.secretbox("x", "00", KEY) end),
    crypto_range = code(function() return crypto.random(0) end),
    crypto_argument = code(function() return crypto.sha256() end),
    env = code(function() return env.get("HOME") end),
    http = code(function() return http.get("http://127.0.0.1:9/") end),
    res_argument = code(function() return res:status("abc") end),
    res_invalid = code(function() return res:header("X-Bad", "a\nb") end),
    publish_argument = code(function() return app.publish(1, "x") end),
    plain = code(function() error("boom") end),
    raised_again = code(function()
      local _, e = pcall(kv.set, "", 1)
      error(e)
    end),
  })
end)
