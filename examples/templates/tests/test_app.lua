-- cove test examples/templates

local function has(body, text)
  return string.find(body, text, 1, true) ~= nil
end

test("home page extends the layout and includes the nav", function()
  local r = test.get("/")
  test.eq(r.status, 200)
  test.eq(r.headers["content-type"], "text/html; charset=utf-8")
  test.ok(has(r.body, "<title>Home · Cove templates</title>"), "title block")
  test.ok(has(r.body, '<a href="/" aria-current="page">Home</a>'), "nav marks the page")
  test.ok(has(r.body, '<link rel="stylesheet" href="/static/style.css">'), "stylesheet")
end)

test("loops, filters and conditions", function()
  local body = test.get("/").body
  test.ok(has(body, "<p>3 users, 3 features.</p>"), "length")
  test.ok(has(body, '<li class="first">1. ALICE &lt;alice@example.com&gt;</li>'), "loop.first, upper")
  test.ok(has(body, "<li>2. BOB &lt;bob@example.com&gt;</li>"), "trim")
  test.ok(has(body, "<li>3. CHARLIE (no email)</li>"), "else branch")
  test.ok(has(body, "Layouts with extends ★"), "comparison")
  test.ok(has(body, "Loop variables (new)"), "elif")
  test.ok(has(body, "<h1>Welcome</h1>"), "default")
end)

test("escaped and raw output", function()
  local body = test.get("/").body
  test.ok(has(body, "Escaped: &lt;b&gt;bold&lt;/b&gt;"), "escaped")
  test.ok(has(body, "Raw: <b>bold</b>"), "raw")
  test.ok(has(body, 'const users = [{"email":"alice@example.com","name":"Alice"}'), "json filter, keys sorted")
end)

test("about page shows the delimiters as text", function()
  local r = test.get("/about")
  test.eq(r.status, 200)
  test.ok(has(r.body, "Write {{ var }} to escape a value and {{{ var }}} to print it raw."), "literals")
  test.ok(has(r.body, '<a href="/about" aria-current="page">About</a>'), "nav")
end)

test("GET /users", function()
  local users = test.get("/users").json
  test.eq(#users, 3)
  test.eq(users[3], { name = "Charlie" })
end)
