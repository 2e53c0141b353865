-- Benchmark app: the routes of Hull's hello example, without i18n.
-- Served by `bench/run` (see bench/harness); keep the responses stable,
-- the harness checks their bodies before measuring.

app.get("/", function(req, res)
  db.exec("INSERT INTO visits (path, ts) VALUES (?, ?)", { req.path, time.now() })
  res:json({ message = "Hello from Cove + Lua!", time = time.datetime() })
end)

app.get("/visits", function(req, res)
  res:json(db.query("SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20"))
end)

app.get("/health", function(req, res)
  res:json({ status = "ok", runtime = "lua", uptime = time.clock() })
end)

app.post("/echo", function(req, res)
  res:json({ body = req.body })
end)

app.get("/greet/:name", function(req, res)
  res:json({ greeting = "Hello, " .. req.params.name .. "!" })
end)
