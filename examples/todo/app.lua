-- todo: a server-rendered todo list (hull-api §12.9). Accounts with hashed
-- passwords, sessions, CSRF-protected forms, rate-limited sign-up and
-- log-in, pages in English and Hungarian, a stylesheet under static/.
--
--   cove -p 8080 -d todo.db examples/todo/app.lua
--   then open http://localhost:8080/
--
-- Environment (declared in the manifest below):
--   CSRF_SECRET    key for CSRF tokens; unset, the app makes one per database
--   COOKIE_SECURE  "false" sends cookies without `Secure`, for plain http on
--                  a host other than localhost (browsers drop Secure cookies
--                  there); anything else, or unset, keeps them Secure

local template = require("hull.template")
local form = require("hull.form")
local validate = require("hull.validate")
local cookie = require("hull.cookie")
local i18n = require("hull.i18n")
local session = require("hull.middleware.session")
local auth = require("hull.middleware.auth")
local csrf = require("hull.middleware.csrf")
local ratelimit = require("hull.middleware.ratelimit")
local logger = require("hull.middleware.logger")
local transaction = require("hull.middleware.transaction")

app.manifest({ env = { "CSRF_SECRET", "COOKIE_SECURE" } })

-- Settings -------------------------------------------------------------------

local cookie_opts = { secure = env.get("COOKIE_SECURE") ~= "false" }

local function hex(bytes)
  return (bytes:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

-- Every worker loads this file, and a token made by one worker must verify
-- on the others (and after a restart), so the secret comes from the
-- environment or from one row of the database, never from a random value
-- drawn at load (Hull's app did that). ON CONFLICT DO NOTHING keeps the value of
-- the first worker that got there.
local function csrf_secret()
  local configured = env.get("CSRF_SECRET")
  if configured and configured ~= "" then
    -- HMAC keys are 1-128 bytes; say so now rather than fail every request.
    if #configured > 128 then
      error("CSRF_SECRET is " .. #configured .. " bytes long; use at most 128 (e.g. 64 hex digits)")
    end
    return configured
  end
  db.exec("INSERT INTO app_secrets (name, value) VALUES ('csrf', ?) ON CONFLICT (name) DO NOTHING",
    { hex(crypto.random(32)) })
  return db.query("SELECT value FROM app_secrets WHERE name = 'csrf'")[1].value
end
local secret = csrf_secret()

-- Logged in for a week after the last visit.
session.init({ ttl = 7 * 86400 })

-- Languages ------------------------------------------------------------------

local locales = {
  en = require("./locales/en.json"),
  hu = require("./locales/hu.json"),
}
for name, strings in pairs(locales) do
  i18n.load(name, strings)
end

-- The `hull.lang` cookie (set by /lang/:code), else Accept-Language, else English.
local function lang_of(req)
  local chosen = cookie.parse(req.headers.cookie)["hull.lang"]
  if locales[chosen] then
    return chosen
  end
  return i18n.detect(req.headers["accept-language"]) or "en"
end

-- i18n has one active locale per worker, and while one request waits for a
-- password hash the worker serves others. So the locale is set right before
-- each lookup: nothing else can run between the two calls.
local function translate(lang, key, params)
  i18n.locale(lang)
  return i18n.t(key, params)
end

-- Helpers --------------------------------------------------------------------

local function user_id(req)
  return req.ctx.session and req.ctx.session.user_id
end

local function render(req, res, page, data)
  local lang = lang_of(req)
  local t = {}
  for key in pairs(locales.en) do
    t[key] = translate(lang, key)
  end
  data.page = page
  data.lang = lang
  data.t = t
  data.year = time.date():sub(1, 4)
  data.logged_in = user_id(req) ~= nil
  data.user = data.logged_in and req.ctx.session or nil
  data.csrf_token = req.ctx.csrf_token
  res:html(template.render("pages/" .. page .. ".html", data))
end

-- Give the page's forms a CSRF token. A token belongs to a session, so a
-- visitor who is not logged in gets an empty session first. POST /login
-- and /register insist on that session: a form posted from another site
-- arrives without the cookie (SameSite=Lax), so no other site can log a
-- visitor in to an account of its choosing.
local function form_token(req, res)
  if not req.ctx.session_id then
    req.ctx.session_id = auth.login(req, res, {}, { cookie_opts = cookie_opts })
  end
  req.ctx.csrf_token = req.ctx.csrf_token or csrf.generate(req.ctx.session_id, secret)
end

-- A login or sign-up form again, with `errors` (a list of messages).
local function form_again(req, res, page, errors, values)
  form_token(req, res)
  values.errors = errors
  render(req, res, page, values)
end

-- The messages of a failed validate.check, in the form's field order.
local function messages(errors, fields)
  local list = {}
  for _, field in ipairs(fields) do
    list[#list + 1] = errors[field]
  end
  return list
end

-- Where /lang/:code goes back to: the Referer when it is a page of this
-- site, else "/". Never "//host/…", which would leave the site.
local function back_to(req)
  local ref = req.headers.referer or "/"
  local host, rest = ref:match("^https?://([^/?#]+)(.*)$")
  if host then
    if host ~= req.headers.host then
      return "/"
    end
    ref = rest
  end
  if ref == "/" or ref:match("^/[^/\\]") then
    return ref
  end
  return "/"
end

-- At most n characters (not bytes: a title is never cut inside a letter).
local function clip(text, n)
  if utf8.len(text) > n then
    return text:sub(1, utf8.offset(text, n + 1) - 1)
  end
  return text
end

local function sign_in(req, res, user)
  auth.login(req, res, { user_id = user.id, name = user.name, email = user.email }, { cookie_opts = cookie_opts })
end

-- Middleware -----------------------------------------------------------------

app.use("*", "/*", logger.middleware({ skip = { "/health" } }))
app.use("*", "/*", auth.session_middleware({ optional = true }))
app.use("POST", "/login", ratelimit.middleware({ limit = 10, window = 60 }))
app.use("POST", "/register", ratelimit.middleware({ limit = 5, window = 60 }))
-- A page left open for a day can still post its forms.
app.use_post("*", "/*", csrf.middleware({ secret = secret, max_age = 86400 }))

-- Pages anyone can see ------------------------------------------------------

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.get("/lang/:code", function(req, res)
  local code = req.params.code
  if locales[code] then
    res:header("Set-Cookie", cookie.serialize("hull.lang", code, {
      secure = cookie_opts.secure,
      max_age = 365 * 86400,
    }))
  end
  res:redirect(back_to(req))
end)

app.get("/about", function(req, res)
  local note = translate(lang_of(req), "about_runtime", { runtime = "Lua" })
  render(req, res, "about", { runtime_note = note })
end)

-- Accounts -------------------------------------------------------------------

app.get("/login", function(req, res)
  if user_id(req) then
    return res:redirect("/")
  end
  form_token(req, res)
  render(req, res, "login", {})
end)

app.get("/register", function(req, res)
  if user_id(req) then
    return res:redirect("/")
  end
  form_token(req, res)
  render(req, res, "register", {})
end)

app.post("/login", function(req, res)
  local lang = lang_of(req)
  local input = form.parse(req.body)
  if not req.ctx.session_id then
    return form_again(req, res, "login", { translate(lang, "error_expired") }, { email = input.email })
  end
  local ok, errors = validate.check(input, {
    email = { required = true, trim = true, email = true, message = translate(lang, "error_email") },
    password = { required = true, message = translate(lang, "error_credentials") },
  })
  if not ok then
    return form_again(req, res, "login", messages(errors, { "email", "password" }), { email = input.email })
  end
  local email = input.email:lower()
  local user = db.query("SELECT id, name, email, password_hash FROM users WHERE email = ?", { email })[1]
  -- verify_password takes a while; the worker serves other requests meanwhile.
  if not (user and crypto.verify_password(input.password, user.password_hash)) then
    return form_again(req, res, "login", { translate(lang, "error_credentials") }, { email = email })
  end
  sign_in(req, res, user)
  res:redirect("/")
end)

app.post("/register", function(req, res)
  local lang = lang_of(req)
  local input = form.parse(req.body)
  local again = { name = input.name, email = input.email }
  if not req.ctx.session_id then
    return form_again(req, res, "register", { translate(lang, "error_expired") }, again)
  end
  local ok, errors = validate.check(input, {
    name = { required = true, trim = true, max = 100, message = translate(lang, "error_name") },
    email = { required = true, trim = true, email = true, max = 254, message = translate(lang, "error_email") },
    password = { required = true, min = 8, message = translate(lang, "error_password") },
  })
  if not ok then
    return form_again(req, res, "register", messages(errors, { "name", "email", "password" }), again)
  end
  local email = input.email:lower()
  local hash = crypto.hash_password(input.password)
  -- The check and the insert in one transaction: two sign-ups with one
  -- address cannot both pass the check.
  local user = transaction.run(function()
    if db.query("SELECT id FROM users WHERE email = ?", { email })[1] then
      return nil
    end
    db.exec(
      "INSERT INTO users (email, password_hash, name, created_at) VALUES (?, ?, ?, ?)",
      { email, hash, input.name, time.now() }
    )
    return { id = db.last_id(), name = input.name, email = email }
  end)
  if not user then
    return form_again(req, res, "register", { translate(lang, "error_taken") }, again)
  end
  sign_in(req, res, user)
  res:redirect("/")
end)

app.post("/logout", function(req, res)
  auth.logout(req, res, { cookie_opts = cookie_opts })
  res:redirect("/login")
end)

-- Todos (logged in only; anyone else goes to /login) ------------------------

app.get("/", function(req, res)
  local uid = user_id(req)
  if not uid then
    return res:redirect("/login")
  end
  local todos = db.query(
    "SELECT id, title, done, created_at FROM todos WHERE user_id = ? ORDER BY created_at DESC, id DESC",
    { uid }
  )
  local total, done_count = #todos, 0
  for _, todo in ipairs(todos) do
    done_count = done_count + todo.done
  end
  local remaining = total - done_count
  local lang = lang_of(req)
  local summary = remaining == 0 and translate(lang, "all_done", { total = total })
    or translate(lang, "summary", { remaining = remaining, total = total })
  render(req, res, "index", {
    todos = todos,
    has_todos = total > 0,
    total = total,
    done_count = done_count,
    remaining = remaining,
    summary = summary,
  })
end)

app.post("/add", function(req, res)
  local uid = user_id(req)
  if not uid then
    return res:redirect("/login")
  end
  local title = (form.parse(req.body).title or ""):match("^%s*(.-)%s*$")
  -- Empty titles are skipped, and so is text that is not UTF-8 (a bad %XX).
  if title ~= "" and utf8.len(title) then
    db.exec(
      "INSERT INTO todos (user_id, title, created_at) VALUES (?, ?, ?)",
      { uid, clip(title, 500), time.now() }
    )
  end
  res:redirect("/")
end)

app.post("/toggle/:id", function(req, res)
  local uid = user_id(req)
  if not uid then
    return res:redirect("/login")
  end
  db.exec("UPDATE todos SET done = 1 - done WHERE id = ? AND user_id = ?", { req.params.id, uid })
  res:redirect("/")
end)

app.post("/delete/:id", function(req, res)
  local uid = user_id(req)
  if not uid then
    return res:redirect("/login")
  end
  db.exec("DELETE FROM todos WHERE id = ? AND user_id = ?", { req.params.id, uid })
  res:redirect("/")
end)
