-- hello: routing, route params, request bodies, a visits table and a
-- two-language greeting.
--
--   cove -p 8080 -d hello.db examples/hello/app.lua
--   curl localhost:8080/greet/World?lang=hu

local strings = {
  en = { message = "Hello from Cove + Lua!", greet = "Hello, %s!" },
  hu = { message = "Szia a Cove + Lua-ból!", greet = "Szia, %s!" },
}

-- `?lang=hu` wins; otherwise an Accept-Language that starts with "hu".
local function lang_of(req)
  local lang = req.query.lang
  if strings[lang] then
    return lang
  end
  local accept = req.headers["accept-language"] or ""
  if accept:lower():sub(1, 2) == "hu" then
    return "hu"
  end
  return "en"
end

local function greet(req)
  local lang = lang_of(req)
  return strings[lang].greet:format(req.params.name), lang
end

app.get("/", function(req, res)
  db.exec("INSERT INTO visits (path, ts) VALUES (?, ?)", { req.path, time.now() })
  local lang = lang_of(req)
  res:json({ message = strings[lang].message, lang = lang, time = time.datetime() })
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

