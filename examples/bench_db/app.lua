-- bench_db: the SQLite endpoints of the database benchmarks (bench/):
-- a 20-row read, one insert, ten inserts in one transaction, and both.
--
--   cove -p 8080 -d bench.db examples/bench_db/app.lua
--   wrk -t4 -c100 -d10s http://localhost:8080/read

local SEED_ROWS = 1000

-- Newest first; ties (same second) by id, so the latest insert leads.
local READ = "SELECT id, kind, payload, ts FROM events ORDER BY ts DESC, id DESC LIMIT 20"
local INSERT = "INSERT INTO events (kind, payload, ts) VALUES (?, ?, ?)"

-- Seed once, in one transaction, so /read has rows to page through. Seed
-- times lie in the past, one second apart: anything written later is newer.
local have = db.query("SELECT COUNT(*) AS n FROM events")[1].n
if have < SEED_ROWS then
  local now = time.now()
  db.batch(function()
    for i = have + 1, SEED_ROWS do
      db.exec(INSERT, { "seed", '{"n":' .. i .. "}", now - SEED_ROWS + i })
    end
  end)
end

local function insert(kind)
  return db.exec(INSERT, { kind, '{"at":' .. time.now_ms() .. "}", time.now() })
end

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.get("/read", function(req, res)
  res:json(db.query(READ))
end)

app.post("/write", function(req, res)
  res:json({ inserted = insert("write") })
end)

app.post("/write-batch", function(req, res)
  local inserted = 0
  db.batch(function()
    for _ = 1, 10 do
      inserted = inserted + insert("batch")
    end
  end)
  res:json({ inserted = inserted })
end)

app.get("/mixed", function(req, res)
  insert("mixed")
  res:json(db.query(READ))
end)
