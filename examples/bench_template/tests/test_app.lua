-- cove test examples/bench_template (Hull's has no tests; these check that
-- each benchmark page renders what it should).

local function count(text, needle)
  local n, at = 0, 1
  while true do
    local s, e = text:find(needle, at, true)
    if not s then
      return n
    end
    n, at = n + 1, e + 1
  end
end

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("GET /simple renders title and message", function()
  local r = test.get("/simple")
  test.eq(r.status, 200)
  test.eq(r.headers["content-type"], "text/html; charset=utf-8")
  test.ok(r.body:find("<title>Simple</title>", 1, true))
  test.ok(r.body:find("<p>Hello from Cove!</p>", 1, true))
end)

test("GET /loop lists 50 items, two in three active", function()
  local body = test.get("/loop").body
  test.eq(count(body, "<li>"), 50)
  test.eq(count(body, " (active)</li>"), 34)
  test.ok(body:find("<li>1. Item 1 (active)</li>", 1, true))
  test.ok(body:find("<li>3. Item 3</li>", 1, true))
end)

test("GET /full: layout, partial, loop, filter and conditions", function()
  local body = test.get("/full").body
  test.ok(body:find("<title>Full · Bench</title>", 1, true), "block in the layout")
  test.ok(body:find("<header><h1>Full</h1></header>", 1, true), "partial")
  test.ok(body:find('<li class="active">ITEM 1</li>', 1, true), "upper filter")
  test.ok(body:find("<li>Item 3</li>", 1, true), "else branch")
  test.eq(count(body, '<li class="active">'), 34)
  test.ok(body:find("<footer>© " .. time.date():sub(1, 4) .. "</footer>", 1, true), "year")
end)
