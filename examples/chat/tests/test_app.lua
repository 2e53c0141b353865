-- cove test examples/chat
--
-- test.get/post call the route handler alone (no middleware, so no
-- session) unless { middleware = true }; the sign-in cases run the whole
-- pipeline with a cookie jar, as a browser would. The WebSocket itself
-- needs a real connection: crates/cove/tests/examples_chat.rs opens them.

local function has(body, text)
  return string.find(body or "", text, 1, true) ~= nil
end

test("GET /health", function()
  local r = test.get("/health")
  test.eq(r.status, 200)
  test.eq(r.json, { status = "ok" })
end)

test("pages send visitors to /login", function()
  for _, path in ipairs({ "/", "/rooms/lobby", "/join?room=lobby" }) do
    local r = test.get(path)
    test.eq(r.status, 302, path)
    test.eq(r.headers.location, "/login", path)
  end
end)

test("GET /login renders the form with a token", function()
  local r = test.get("/login")
  test.eq(r.status, 200)
  test.eq(r.headers["content-type"], "text/html; charset=utf-8")
  test.ok(has(r.body, '<form method="post" action="/login" class="stack">'), "form")
  test.ok(has(r.headers["set-cookie"], "hull_session="), "visitor session")
  test.ok(r.body:match('name="_csrf" value="%x+%.%x+"'), "CSRF token")
  -- The page may load this site's script and open connections to it.
  local csp = r.headers["content-security-policy"]
  test.ok(has(csp, "script-src 'self'") and has(csp, "connect-src 'self'"), csp)
end)

test("the online count's stream starts with the count", function()
  local r = test.get("/events/online")
  test.eq(r.status, 200)
  test.eq(r.headers["content-type"], "text/event-stream")
  test.eq(r.body, 'event: online\ndata: {"online":0}\n\n')
end)

test("the WebSocket endpoint wants an upgrade, and a session first", function()
  test.eq(test.get("/ws/rooms/lobby").status, 426)
  local r = test.get("/ws/rooms/lobby", { middleware = true })
  test.eq(r.status, 401)
  test.eq(r.json, { error = "Sign in first." })
end)

-- The whole pipeline with a cookie jar: sessions and CSRF tokens.
local jar = {}

local function encode(text)
  text = text:gsub("[^%w%-_.~ ]", function(c)
    return string.format("%%%02X", c:byte())
  end)
  return (text:gsub(" ", "+"))
end

-- `fields`: a list of {name, value}, sent as a form.
local function request(method, path, fields, headers)
  local cookies = {}
  for name, value in pairs(jar) do
    cookies[#cookies + 1] = name .. "=" .. value
  end
  local opts = { middleware = true, headers = headers or {} }
  opts.headers.Cookie = table.concat(cookies, "; ")
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

test("a name is checked", function()
  local page = request("get", "/login")
  for _, case in ipairs({
    { "   ", "Please enter a name." },
    { string.rep("é", 33), "A name is at most 32 characters." },
    { "tab\there", "A name cannot contain control characters." },
  }) do
    local r = request("post", "/login", { { "_csrf", token(page) }, { "name", case[1] } })
    test.eq(r.status, 400, case[2])
    test.ok(has(r.body, case[2]), case[2])
  end
  -- Without the visitor session (a form posted from another site).
  local r = test.post("/login", { middleware = true, body = "name=Eve" })
  test.eq(r.status, 400)
  test.ok(has(r.body, "This form had expired. Please send it again."), "expired")
end)

test("sign in, rooms, a room's page, sign out", function()
  jar = {}
  local page = request("get", "/login")
  local r = request("post", "/login", { { "_csrf", token(page) }, { "name", "  Ada <3  " } })
  test.eq(r.status, 302)
  test.eq(r.headers.location, "/")

  db.exec("INSERT INTO messages (room, name, text, at) VALUES ('rust', 'Bob', 'hi', 1), ('rust', 'Bob', 'yo', 2)")
  local home = request("get", "/")
  test.eq(home.status, 200)
  test.ok(has(home.body, '<span class="who">Ada &lt;3</span>'), "the name, trimmed and escaped")
  test.ok(has(home.body, '<a href="/rooms/rust">#rust</a> <span class="muted">2 messages</span>'), "rust")
  test.ok(has(home.body, '<a href="/rooms/lobby">#lobby</a> <span class="muted">0 messages</span>'), "lobby")
  test.ok(has(home.body, '<script src="/static/chat.js" defer></script>'), "the page's script")
  test.eq(request("get", "/login").headers.location, "/")

  r = request("get", "/join?room=%20Rust-Fans%20")
  test.eq(r.status, 302)
  test.eq(r.headers.location, "/rooms/rust-fans")
  r = request("get", "/join?room=-nope")
  test.eq(r.status, 400)
  test.ok(has(r.body, "Room names are 1 to 32 lowercase letters"), "room rule")
  test.eq(request("get", "/rooms/Not_This").status, 404)

  local room = request("get", "/rooms/rust-fans")
  test.eq(room.status, 200)
  test.ok(has(room.body, '<section class="card chat" id="chat" data-room="rust-fans" data-user="Ada &lt;3">'), "room")
  test.ok(has(room.body, 'maxlength="500"'), "message limit")

  -- Signing out needs the token, then ends the session.
  test.eq(request("post", "/logout", {}).status, 403)
  r = request("post", "/logout", { { "_csrf", token(room) } })
  test.eq(r.status, 302)
  test.eq(r.headers.location, "/login")
  test.eq(jar.hull_session, nil)
  test.eq(request("get", "/").headers.location, "/login")
end)
