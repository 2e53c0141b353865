-- The shared store (require("hull.kv")); conformance/specs/kv.toml.
local kv = require("hull.kv")

-- `mine` counts in this VM only: with several workers it shows that more
-- than one VM answered while `n` stays one count (tests/shared_state.rs).
local mine = 0

app.get("/kv/incr", function(req, res)
  mine = mine + 1
  res:json({ n = kv.incr("hits"), by5 = kv.incr("fives", 5, 60), mine = mine })
end)

app.get("/kv/values", function(req, res)
  kv.set("s", "text")
  kv.set("i", 42)
  kv.set("f", 1.5)
  kv.set("b", false)
  kv.set("short", "x", 30)
  local ttl = kv.ttl("short")
  res:json({
    s = kv.get("s"), i = kv.get("i"), f = kv.get("f"), b = kv.get("b"),
    missing_is_nil = kv.get("missing") == nil,
    ttl_ok = ttl > 29 and ttl <= 30,
    no_ttl_is_nil = kv.ttl("s") == nil,
    added = kv.add("once", "a"), added_again = kv.add("once", "b"), once = kv.get("once"),
    deleted = kv.delete("once"), deleted_again = kv.delete("once"),
  })
end)

app.get("/kv/bad-value", function(req, res)
  kv.set("t", { 1, 2 })
end)

app.get("/kv/bad-ttl", function(req, res)
  kv.set("t", "v", -5)
end)

app.get("/kv/not-integer", function(req, res)
  kv.set("word", "hello")
  kv.incr("word")
end)

-- What pcall caught: a plain string positioned at the calling line.
app.get("/kv/caught", function(req, res)
  local function caught(f)
    local ok, err = pcall(f)
    if ok then return { ok = true } end
    if type(err) ~= "string" then return { ok = false, error_type = type(err) } end
    local msg, located = err:gsub("^app%.lua:%d+: ", "", 1)
    return { ok = false, message = located == 1 and msg or ("not located: " .. err) }
  end
  kv.set("word", "hello")
  res:json({
    ttl = caught(function() kv.set("t", "v", -5) end),
    incr = caught(function() kv.incr("word") end),
  })
end)
