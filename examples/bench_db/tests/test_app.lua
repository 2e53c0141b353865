-- cove test examples/bench_db — the cases run in order against one database.

local function count(kind)
  return db.query("SELECT COUNT(*) AS n FROM events WHERE kind = ?", { kind })[1].n
end

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("the app seeds 1000 events at load", function()
  test.eq(count("seed"), 1000)
end)

test("GET /read returns the 20 newest events", function()
  local rows = test.get("/read").json
  test.eq(#rows, 20)
  test.eq(rows[1].id, 1000)
  test.eq(rows[20].id, 981)
  test.eq(rows[1].kind, "seed")
  test.eq(rows[1].payload, '{"n":1000}')
  test.ok(rows[1].ts > rows[20].ts)
end)

test("POST /write inserts one event", function()
  test.eq(test.post("/write").json, { inserted = 1 })
  test.eq(count("write"), 1)
  test.eq(test.get("/read").json[1].kind, "write")
end)

test("POST /write-batch inserts ten in one transaction", function()
  test.eq(test.post("/write-batch").json.inserted, 10)
  test.eq(count("batch"), 10)
end)

test("GET /mixed inserts one and reads the newest 20", function()
  local rows = test.get("/mixed").json
  test.eq(#rows, 20)
  test.eq(rows[1].kind, "mixed")
  test.eq(count("mixed"), 1)
end)
