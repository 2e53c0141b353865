-- The app tools/stress (cove-bench --stress) serves: the benchmark's
-- /hello and /json, and handlers that misbehave on purpose.

app.get("/hello", function(req, res) res:text("Hello World!") end)
app.get("/json", function(req, res) res:json({ message = "Hello, World!" }) end)

-- Grows a table until the heap cap (-m) stops it: a 500.
app.get("/alloc", function(req, res)
  local t = {}
  local i = 0
  while true do
    i = i + 1
    t[i] = string.rep("x", 1024) .. i
  end
end)

-- Runs until the instruction budget stops it: a 500.
app.get("/loop", function(req, res)
  local x = 0
  while true do x = x + 1 end
end)

-- Recurses until the stack limit stops it: a 500.
app.get("/recurse", function(req, res)
  local function down(n) return down(n + 1) + 1 end
  res:json({ n = down(0) })
end)

-- A JSON document nested 100,000 deep: an error, not a crash.
app.post("/deep", function(req, res)
  local ok, err = pcall(json.decode, req.body)
  res:json({ ok = ok, error = not ok and tostring(err) or nil })
end)

-- The cheapest loop there is, for the budget probe: stopped by the budget
-- after about as much CPU time as app.js's twin.
app.get("/empty", function(req, res)
  while true do end
end)
