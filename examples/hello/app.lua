-- hello: routing, route params, request bodies, a visits table and a
-- two-language greeting with hull.i18n.
--
--   cove -p 8080 -d hello.db examples/hello/app.lua
--   curl localhost:8080/greet/World?lang=hu

local i18n = require("hull.i18n")

-- locales/*.json hold the strings; `${name}` is filled in by i18n.t.
i18n.load("en", require("./locales/en.json"))
i18n.load("hu", require("./locales/hu.json"))

-- Pick the request's language and make it the active locale: `?lang=hu`
-- wins, then the best Accept-Language match (q-values count), else English.
-- Every handler calls this first: the active locale belongs to this worker,
-- not to the request.
local function use_lang(req)
  local lang = req.query.lang
  if lang ~= "en" and lang ~= "hu" then
    lang = i18n.detect(req.headers["accept-language"]) or "en"
  end
  i18n.locale(lang)
  return lang
end

local function greet(req)
  local lang = use_lang(req)
  return i18n.t("greet", { name = req.params.name }), lang
end

app.get("/", function(req, res)
  db.exec("INSERT INTO visits (path, ts) VALUES (?, ?)", { req.path, time.now() })
  local lang = use_lang(req)
  res:json({ message = i18n.t("message.lua"), lang = lang, time = time.datetime() })
end)

app.get("/visits", function(req, res)
  res:json(db.query("SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20"))
end)

app.get("/health", function(req, res)
  res:json({ status = "ok", runtime = "lua", uptime = time.clock() })
end)

-- Without a body, req.body is nil and the reply is `[]` (an empty table).
app.post("/echo", function(req, res)
  res:json({ body = req.body })
end)

app.get("/greet/:name", function(req, res)
  local greeting, lang = greet(req)
  res:json({ greeting = greeting, lang = lang })
end)

app.post("/greet/:name", function(req, res)
  local greeting, lang = greet(req)
  res:json({ greeting = greeting, lang = lang, body = req.body })
end)

