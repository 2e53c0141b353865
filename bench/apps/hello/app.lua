-- Cove's implementation of the benchmark routes (bench/peers/README.md lists
-- them; every peer serves the same). Served by `bench/run`, which checks the
-- bodies before measuring: keep them as the README says.

-- http group -------------------------------------------------------------

app.get("/hello", function(req, res)
  res:text("Hello World!")
end)

app.get("/json", function(req, res)
  res:json({ message = "Hello, World!" })
end)

-- The toy routing benchmark: similar prefixes, separate routes.
app.get("/hey", function(req, res) res:text("hey") end)
app.get("/hell", function(req, res) res:text("hell") end)
app.get("/about", function(req, res) res:text("about") end)

app.get("/health", function(req, res)
  res:json({ status = "ok", runtime = "lua", uptime = time.clock() })
end)

app.get("/greet/:name", function(req, res)
  res:json({ greeting = "Hello, " .. req.params.name .. "!" })
end)

app.post("/echo", function(req, res)
  res:json({ body = req.body })
end)

app.post("/greet/:name", function(req, res)
  res:json({ greeting = "Hello, " .. req.params.name .. "!", body = req.body })
end)

-- sqlite group (Hull's hello and bench_db routes) -------------------------

if db.query("SELECT COUNT(*) AS n FROM events")[1].n < 1000 then
  db.batch(function()
    for i = 1, 1000 do
      db.exec("INSERT INTO events (kind, payload, ts) VALUES ('seed', ?, ?)",
        { '{"n":' .. i .. '}', time.now() })
    end
  end)
end

local READ = "SELECT id, kind, payload, ts FROM events ORDER BY ts DESC LIMIT 20"

app.get("/", function(req, res)
  db.exec("INSERT INTO visits (path, ts) VALUES (?, ?)", { req.path, time.now() })
  res:json({ message = "Hello!", time = time.datetime() })
end)

app.get("/visits", function(req, res)
  res:json(db.query("SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20"))
end)

app.get("/read", function(req, res)
  res:json(db.query(READ))
end)

app.post("/write", function(req, res)
  local n = db.exec("INSERT INTO events (kind, payload, ts) VALUES ('write', ?, ?)",
    { req.body, time.now() })
  res:json({ inserted = n })
end)

app.post("/write-batch", function(req, res)
  local n = 0
  db.batch(function()
    for _ = 1, 10 do
      n = n + db.exec("INSERT INTO events (kind, payload, ts) VALUES ('write', ?, ?)",
        { req.body, time.now() })
    end
  end)
  res:json({ inserted = n })
end)

app.get("/mixed", function(req, res)
  db.exec("INSERT INTO events (kind, payload, ts) VALUES ('mixed', '{}', ?)", { time.now() })
  res:json(db.query(READ))
end)
