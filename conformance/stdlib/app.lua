-- The stdlib modules cookie, jwt, form, validate and i18n, route by route;
-- conformance/specs/stdlib_*.toml. app.js is the same app.
local cookie = require("hull.cookie")
local jwt = require("hull.jwt")
local form = require("hull.form")
local validate = require("hull.validate")
local i18n = require("hull.i18n")

local function is_empty(t)
  return next(t) == nil
end

---------------------------------------------------------------- cookie

app.get("/cookie/parse", function(req, res)
  res:json(cookie.parse(req.headers.cookie))
end)

app.get("/cookie/parse-empty", function(req, res)
  res:json({
    none = is_empty(cookie.parse(nil)), blank = is_empty(cookie.parse("")),
    number = is_empty(cookie.parse(42)), only_junk = is_empty(cookie.parse("; =x; flag")),
  })
end)

app.get("/cookie/defaults", function(req, res)
  res:json({
    default = cookie.serialize("sid", "abc"),
    no_flags = cookie.serialize("a", "b", { path = false, httponly = false, secure = false, samesite = false }),
    samesite_none = cookie.serialize("a", "b", { samesite = "none" }),
    nil_value = cookie.serialize("a", nil, { secure = false }),
  })
end)

app.get("/cookie/all", function(req, res)
  res:json({ all = cookie.serialize("a", "b", {
    path = "/x", domain = "example.com", max_age = 60, expires = "Wed, 21 Oct 2026 07:28:00 GMT",
    httponly = false, secure = false, samesite = "Strict",
  }) })
end)

app.get("/cookie/encoding", function(req, res)
  res:json({ value = cookie.serialize("v", "a b,é", { secure = false }) })
end)

app.get("/cookie/clear", function(req, res)
  res:json({ clear = cookie.clear("sid", { path = "/app" }) })
end)

app.get("/cookie/set", function(req, res)
  res:header("Set-Cookie", cookie.serialize("a", "1"))
  res:header("Set-Cookie", cookie.serialize("b", "2", { secure = false }))
  res:json({ ok = true })
end)

app.get("/cookie/bad-name", function(req, res)
  cookie.serialize("a b", "1")
end)

app.get("/cookie/bad-path", function(req, res)
  cookie.serialize("a", "1", { path = "/x;y" })
end)

app.get("/cookie/bad-samesite", function(req, res)
  cookie.serialize("a", "1", { samesite = "sometimes" })
end)

---------------------------------------------------------------- jwt

local SECRET = "conformance-secret"

app.get("/jwt/sign-fixed", function(req, res)
  res:json({ token = jwt.sign({ sub = "42", name = "José", iat = 1700000000, exp = 4000000000 }, SECRET) })
end)

app.post("/jwt/verify", function(req, res)
  local claims, reason = jwt.verify(req.body, SECRET)
  if claims then
    return res:json({ ok = true, claims = claims })
  end
  res:json({ ok = false, reason = reason })
end)

-- Hull's Lua reads an `exp` below 2e9 as seconds from now.
app.get("/jwt/relative-exp", function(req, res)
  local token = jwt.sign({ sub = 1, exp = 60 }, SECRET)
  local claims = jwt.decode(token)
  res:json({ relative = claims.exp == claims.iat + 60, verified = jwt.verify(token, SECRET) ~= nil })
end)

app.get("/jwt/wrong-secret", function(req, res)
  local _, reason = jwt.verify(jwt.sign({ sub = 1 }, SECRET), "another-secret")
  res:json({ reason = reason })
end)

app.get("/jwt/decode", function(req, res)
  local token = jwt.sign({ sub = "7", iat = 1 }, SECRET)
  local forged = token:gsub("%.[^.]+$", ".AAAA")
  res:json({ decoded = jwt.decode(forged), garbage_is_nil = jwt.decode("garbage") == nil })
end)

app.get("/jwt/sign-without-payload", function(req, res)
  local token, err = jwt.sign(nil, SECRET)
  res:json({ token_is_nil = token == nil, error = err })
end)

---------------------------------------------------------------- form

app.post("/form/parse", function(req, res)
  res:json(form.parse(req.body))
end)

app.get("/form/empty", function(req, res)
  res:json({
    none = is_empty(form.parse(nil)), blank = is_empty(form.parse("")),
    number = is_empty(form.parse(5)), junk = is_empty(form.parse("&&=x&novalue")),
  })
end)

---------------------------------------------------------------- validate

local schemas = {
  signup = {
    name = { required = true, trim = true, min = 2, max = 10 },
    email = { required = true, email = true },
    age = { type = "integer", min = 18, max = 130 },
    role = { oneof = { "admin", "user" } },
    code = { pattern = "^%d%d%d$" },
    nick = { type = "string", message = "nick must be text" },
    password = {
      required = true, min = 8,
      fn = function(v)
        if v == "password1" then
          return "too common"
        end
      end,
    },
  },
  types = {
    s = { type = "string" }, n = { type = "number" }, b = { type = "boolean" }, i = { type = "integer" },
    flag = { required = true },
  },
  custom = {
    title = { required = true, message = "title please" },
    password = { required = true },
    -- fn sees (value, field, data); `message` does not replace its message.
    confirm = {
      message = "ignored",
      fn = function(v, field, data)
        if v ~= data.password then
          return field .. " does not match"
        end
      end,
    },
    agree = { fn = function() return true end }, -- not a string: no error
  },
  bad_type = { x = { type = "date" } },
}

app.post("/validate/:schema", function(req, res)
  local data = json.decode(req.body)
  local ok, errors = validate.check(data, schemas[req.params.schema])
  res:json({ ok = ok, errors = errors, name = type(data) == "table" and data.name or nil })
end)

---------------------------------------------------------------- i18n

local function setup()
  i18n.load("en", {
    greet = "Hello, ${name}!",
    count = "${n} items",
    errors = { not_found = "not found" },
    -- Hull's JS read only these camelCase keys.
    format = { decimalSep = ".", thousandsSep = ",", datePattern = "MM/DD/YYYY",
      currency = { USD = { symbol = "$", decimalDigits = 2 } } },
  })
  i18n.load("hu", {
    greet = "Szia, ${name}!",
    count = "${n} elem",
    errors = { not_found = "nem található" },
    format = { decimal_sep = ",", thousands_sep = " ", date_pattern = "YYYY.MM.DD. HH:mm",
      currency = { HUF = { symbol = "Ft", position = "after", decimal_digits = 0 },
        EUR = { symbol = "€", position = "after" } } },
  })
  i18n.load("de", { format = { date_pattern = "DD.MM.YYYY (DD)" } })
  i18n.load("pt-BR", { greet = "Olá, ${name}!" })
end
setup()

-- Every i18n route sets the locale first (it is per worker, not per request).
local function use(req)
  i18n.locale(req.query.lang or "none")
end

app.get("/i18n/t", function(req, res)
  use(req)
  res:json({
    greet = i18n.t("greet", { name = "Anna" }), nested = i18n.t("errors.not_found"),
    missing = i18n.t("no.such.key"), param_missing = i18n.t("greet"), not_text = i18n.t("errors"),
    explicit = i18n.t("greet", { name = "Bob" }, "en"), number_param = i18n.t("count", { n = 5 }),
    locale = i18n.locale(),
  })
end)

app.get("/i18n/number", function(req, res)
  use(req)
  res:json({
    int = i18n.number(1234567), neg = i18n.number(-1234.5), frac = i18n.number(0.1 + 0.2),
    small = i18n.number(0.00001), long = i18n.number(12345678.123456), zero = i18n.number(0),
    thousand = i18n.number(1000), text = i18n.number("x"),
  })
end)

app.get("/i18n/date", function(req, res)
  use(req)
  res:json({ date = i18n.date(1700000000), epoch = i18n.date(0), leap = i18n.date(951782400) })
end)

app.get("/i18n/currency", function(req, res)
  use(req)
  res:json({
    usd = i18n.currency(1234.5, "USD"), huf = i18n.currency(1234567.4, "HUF"),
    eur = i18n.currency(-9.999, "EUR"), unknown = i18n.currency(5, "XYZ"),
  })
end)

app.get("/i18n/detect", function(req, res)
  res:json({
    lang = i18n.detect(req.headers["accept-language"]) or "none",
    from_req = i18n.detect(req) or "none",
  })
end)

app.get("/i18n/reset", function(req, res)
  i18n.locale("hu")
  i18n.reset()
  local after = { locale_is_nil = i18n.locale() == nil, t = i18n.t("greet"), detect = i18n.detect("hu") or "none" }
  setup()
  res:json(after)
end)

app.get("/i18n/bad-load", function(req, res)
  i18n.load(5, {})
end)
