-- Cove's implementation of the `pg` and `redis` benchmark routes
-- (bench/peers/README.md). `bench/run` starts it with
-- `--db <PostgreSQL URL> --kv <Redis URL>`, after it has created and seeded
-- bench_items and bench_writes. db.query and the kv calls suspend this
-- handler while PostgreSQL or Redis answers, so one worker keeps serving
-- other requests meanwhile (up to four pipelined PostgreSQL connections and
-- one Redis connection per worker).

local kv = require("hull.kv")

-- The readiness check of the harness.
app.get("/hello", function(req, res)
  res:text("Hello World!")
end)

-- pg group ----------------------------------------------------------------

local READ = "SELECT id, name, value FROM bench_items WHERE id = ?"
local WRITE = "INSERT INTO bench_writes (payload, ts) VALUES (?, ?) RETURNING id"

app.get("/pg/read", function(req, res)
  local row = db.query(READ, { tonumber(req.query.id) })[1]
  if row == nil then
    res:status(404):json({ error = "no such item" })
    return
  end
  res:json(row)
end)

app.post("/pg/write", function(req, res)
  local row = db.query(WRITE, { req.body, time.now() })[1]
  res:json({ id = row.id })
end)

-- redis group -------------------------------------------------------------

kv.set("greeting", "hello")

-- One GET and one INCR, in turn.
app.get("/redis", function(req, res)
  local greeting = kv.get("greeting")
  local count = kv.incr("counter")
  res:json({ count = count, greeting = greeting })
end)
