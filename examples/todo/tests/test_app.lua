-- cove test examples/todo
--
-- As in Hull, test.get/post call the route handler alone: no middleware,
-- so no session — protected routes redirect to /login and forms have no
-- session to post from. The last case runs the whole pipeline
-- ({ middleware = true }) with a cookie jar, as a browser would.

local function has(body, text)
  return string.find(body or "", text, 1, true) ~= nil
end

test("GET /health", function()
  local r = test.get("/health")
  test.eq(r.status, 200)
  test.eq(r.json, { status = "ok" })
end)

test("GET / redirects to /login without a session", function()
  local r = test.get("/")
  test.eq(r.status, 302)
  test.eq(r.headers.location, "/login")
end)

test("GET /login and /register render their forms", function()
  for _, page in ipairs({ "login", "register" }) do
    local r = test.get("/" .. page)
    test.eq(r.status, 200, page)
    test.eq(r.headers["content-type"], "text/html; charset=utf-8")
    test.ok(has(r.body, '<form method="post" action="/' .. page .. '" class="stack">'), page .. " form")
    test.ok(has(r.body, '<link rel="stylesheet" href="/static/style.css">'), "stylesheet")
    -- Forms need a token, and a token needs a session: the page starts one.
    test.ok(has(r.headers["set-cookie"], "hull_session="), "visitor session")
    test.ok(r.body:match('name="_csrf" value="%x+%.%x+"'), "CSRF token")
  end
  test.ok(has(test.get("/register").body, "<h1>Create your account</h1>"), "heading")
end)

test("GET /about in English and Hungarian", function()
  test.ok(has(test.get("/about").body, "This copy runs on Lua."), "English")
  local r = test.get("/about", { headers = { ["Accept-Language"] = "hu-HU,hu;q=0.9" } })
  test.ok(has(r.body, '<html lang="hu">'), "lang attribute")
  test.ok(has(r.body, "Ez a példány Lua nyelven fut."), "Hungarian")
  r = test.get("/about", { headers = { Cookie = "hull.lang=en", ["Accept-Language"] = "hu" } })
  test.ok(has(r.body, "This copy runs on Lua."), "the cookie wins")
end)

test("GET /lang/:code sets hull.lang and goes back", function()
  local r = test.get("/lang/hu", { headers = { Referer = "/about" } })
  test.eq(r.status, 302)
  test.eq(r.headers.location, "/about")
  test.ok(has(r.headers["set-cookie"], "hull.lang=hu; Path=/"), r.headers["set-cookie"])
  test.eq(test.get("/lang/hu", { headers = { Referer = "//evil.example/" } }).headers.location, "/")
  test.eq(test.get("/lang/xx").headers["set-cookie"], nil)
end)

test("POST /login without a session logs nobody in", function()
  local r = test.post("/login", { body = "email=a%40example.com&password=whatever1" })
  test.eq(r.status, 200)
  test.ok(has(r.body, "This form had expired. Please send it again."), "message")
  test.ok(has(r.body, 'value="a@example.com"'), "the address is kept")
end)

test("todo routes redirect to /login without a session", function()
  for _, path in ipairs({ "/add", "/toggle/1", "/delete/1", "/logout" }) do
    local r = test.post(path, { body = "title=x" })
    test.eq(r.status, 302, path)
    test.eq(r.headers.location, "/login", path)
  end
end)

-- Runs the middleware too: sessions, CSRF, rate limits.
local jar = {}

-- As a browser encodes form fields.
local function encode(text)
  text = text:gsub("[^%w%-_.~ ]", function(c)
    return string.format("%%%02X", c:byte())
  end)
  return (text:gsub(" ", "+"))
end

-- test.get/test.post with the jar's cookies and the whole pipeline;
-- Set-Cookie goes back into the jar. `fields`: a list of {name, value}.
local function request(method, path, fields)
  local cookies = {}
  for name, value in pairs(jar) do
    cookies[#cookies + 1] = name .. "=" .. value
  end
  local opts = { middleware = true, headers = { Cookie = table.concat(cookies, "; ") } }
  if fields then
    local encoded = {}
    for _, field in ipairs(fields) do
      encoded[#encoded + 1] = field[1] .. "=" .. encode(field[2])
    end
    opts.body = table.concat(encoded, "&")
    opts.headers["Content-Type"] = "application/x-www-form-urlencoded"
  end
  local r = test[method](path, opts)
  local name, value = (r.headers["set-cookie"] or ""):match("^([^=;]+)=([^;]*)")
  if name then
    jar[name] = value ~= "" and value or nil
  end
  return r
end

local function token(page)
  return page.body:match('name="_csrf" value="([^"]+)"')
end

test("sign up, add, toggle and delete with the whole pipeline", function()
  local page = request("get", "/register")
  local r = request("post", "/register", {
    { "_csrf", token(page) }, { "name", "Ada" }, { "email", "ada@example.com" }, { "password", "analytical" },
  })
  test.eq(r.status, 302)
  test.eq(r.headers.location, "/")

  page = request("get", "/")
  test.ok(has(page.body, '<span class="who">Ada</span>'), "logged in")
  test.eq(request("post", "/add", { { "title", "no token" } }).status, 403)
  test.eq(request("post", "/add", { { "_csrf", token(page) }, { "title", "Buy milk" } }).status, 302)
  local id = db.query("SELECT id FROM todos WHERE title = 'Buy milk'")[1].id
  test.eq(request("post", "/toggle/" .. id, { { "_csrf", token(page) } }).status, 302)
  test.ok(has(request("get", "/").body, '<li class="todo done" id="todo-' .. id .. '">'), "done")
  test.eq(request("post", "/delete/" .. id, { { "_csrf", token(page) } }).status, 302)
  test.eq(#db.query("SELECT id FROM todos"), 0)
end)
