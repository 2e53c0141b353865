-- chat: rooms over WebSocket, a live "online" counter over Server-Sent
-- Events, sign-in by name with a session cookie.
--
--   cove -p 8080 -d chat.db examples/chat/app.lua
--   then open http://localhost:8080/ in two browsers (or a private window)
--
-- How it fits together:
--   * POST /login keeps a name in a session (hull.middleware.session, rows
--     in the database), so every worker knows who the cookie belongs to.
--   * /ws/rooms/:room is a WebSocket endpoint. Middleware runs before the
--     upgrade: no session, a page of another site, or a bad room name, and
--     the upgrade is refused (401, 403, 400).
--   * A connection subscribes to "room:<name>"; what one member says is
--     stored (the last 50 messages of each room are kept) and published to
--     that topic, which reaches the room's members on every worker.
--   * GET /events/online is an event stream: the number of people with a
--     room open, sent first and then whenever it changes.
--   * static/chat.js is the page's script: the default Content-Security-
--     Policy allows none, so the manifest allows this site's scripts and
--     connections (WebSocket and EventSource).
--
-- Anybody can sign in under any name: there are no passwords. The online
-- count lives in the kv store (one process's memory, or Redis with
-- --kv redis://), so it starts from zero with the server.
--
-- Environment (declared in the manifest below):
--   CSRF_SECRET    key for CSRF tokens; unset, the app makes one per database
--   COOKIE_SECURE  "false" sends cookies without `Secure`, for plain http on
--                  a host other than localhost; anything else keeps them Secure

local template = require("hull.template")
local form = require("hull.form")
local kv = require("hull.kv")
local session = require("hull.middleware.session")
local auth = require("hull.middleware.auth")
local csrf = require("hull.middleware.csrf")
local logger = require("hull.middleware.logger")

app.manifest({
  env = { "CSRF_SECRET", "COOKIE_SECURE" },
  csp = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
    .. "img-src 'self'; form-action 'self'; frame-ancestors 'none'",
})

-- Settings -------------------------------------------------------------------

local KEEP = 50 -- messages kept (and sent on joining) per room
local MAX_MESSAGE = 500 -- characters
local MAX_NAME = 32 -- characters, for user and room names

local cookie_opts = { secure = env.get("COOKIE_SECURE") ~= "false" }

local function hex(bytes)
  return (bytes:gsub(".", function(c)
    return string.format("%02x", c:byte())
  end))
end

-- One secret for every worker (and restart): from the environment, else
-- one row of the database, which the first worker to load writes.
local function csrf_secret()
  local configured = env.get("CSRF_SECRET")
  if configured and configured ~= "" then
    return configured
  end
  db.exec("INSERT INTO app_secrets (name, value) VALUES ('csrf', ?) ON CONFLICT (name) DO NOTHING",
    { hex(crypto.random(32)) })
  return db.query("SELECT value FROM app_secrets WHERE name = 'csrf'")[1].value
end
local secret = csrf_secret()

session.init({ ttl = 7 * 86400 })

-- Checks ---------------------------------------------------------------------

-- Without the spaces, tabs and line breaks at either end.
local function trim(text)
  return (text:match("^%s*(.-)%s*$"))
end

-- The problem with a user name, or nil.
local function name_problem(name)
  local length = utf8.len(name)
  if name == "" then
    return "Please enter a name."
  elseif not length then
    return "A name must be UTF-8 text."
  elseif length > MAX_NAME then
    return "A name is at most " .. MAX_NAME .. " characters."
  elseif name:find("%c") then
    return "A name cannot contain control characters."
  end
  return nil
end

local ROOM_RULE = "Room names are 1 to " .. MAX_NAME
  .. " lowercase letters, digits and dashes, starting with a letter or digit."

local function valid_room(room)
  return #room <= MAX_NAME and room:match("^[a-z0-9][a-z0-9-]*$") ~= nil
end

-- The message to store and send, or nil and what is wrong with it.
local function check_message(data, is_binary)
  if is_binary then
    return nil, "Messages are text, not binary."
  end
  local text = trim(data)
  local length = utf8.len(text)
  if text == "" then
    return nil, "A message cannot be empty."
  elseif not length then
    return nil, "A message must be UTF-8 text."
  elseif length > MAX_MESSAGE then
    return nil, "A message is at most " .. MAX_MESSAGE .. " characters (this one has " .. length .. ")."
  end
  return text
end

-- Helpers --------------------------------------------------------------------

-- The signed-in user's name, or nil (a visitor's session holds no name).
local function user_of(req)
  return req.ctx.session and req.ctx.session.name
end

local function render(req, res, page, data)
  data.page = page
  data.user = user_of(req)
  data.csrf_token = req.ctx.csrf_token
  res:html(template.render("pages/" .. page .. ".html", data))
end

-- A token for the sign-in form. A token belongs to a session, so a visitor
-- gets an empty session first; POST /login insists on it, so a form posted
-- from another site (which arrives without the SameSite=Lax cookie) signs
-- nobody in.
local function form_token(req, res)
  if not req.ctx.session_id then
    req.ctx.session_id = auth.login(req, res, {}, { cookie_opts = cookie_opts })
  end
  req.ctx.csrf_token = req.ctx.csrf_token or csrf.generate(req.ctx.session_id, secret)
end

-- The rooms with messages, busiest first, and the lobby (always there).
local function rooms()
  local list = db.query(
    "SELECT room, COUNT(*) AS messages FROM messages GROUP BY room ORDER BY COUNT(*) DESC, room LIMIT 50"
  )
  for _, r in ipairs(list) do
    if r.room == "lobby" then
      return list
    end
  end
  table.insert(list, 1, { room = "lobby", messages = 0 })
  return list
end

local function index(req, res, status, errors)
  res:status(status)
  render(req, res, "index", { rooms = rooms(), errors = errors })
end

-- A room's kept messages, oldest first.
local function history(room)
  local rows = db.query("SELECT name, text, at FROM messages WHERE room = ? ORDER BY id DESC LIMIT ?",
    { room, KEEP })
  local messages = {}
  for i = #rows, 1, -1 do
    local row = rows[i]
    messages[#messages + 1] = { user = row.name, text = row.text, at = row.at }
  end
  return messages
end

-- Who is online: kv counts each user's open rooms, and "chat:online" the
-- users with at least one. Only a change is published.
local function arrived(user)
  if kv.incr("chat:user:" .. user) == 1 then
    app.publish("online", { online = kv.incr("chat:online") })
  end
end

local function departed(user)
  if kv.incr("chat:user:" .. user, -1) == 0 then
    app.publish("online", { online = kv.incr("chat:online", -1) })
  end
end

-- Middleware -----------------------------------------------------------------

app.use("*", "/*", logger.middleware({ skip = { "/health" } }))
app.use("*", "/*", auth.session_middleware({ optional = true }))

-- Before a WebSocket upgrade: only signed-in users, only from this site's
-- pages (a browser sends the cookie with a WebSocket opened by any site,
-- and says which one in Origin), only rooms with valid names.
app.use("GET", "/ws/*", function(req, res)
  if not user_of(req) then
    res:json({ error = "Sign in first." }, 401)
    return true
  end
  local origin = req.headers.origin
  if origin and origin:match("^https?://([^/]+)$") ~= req.headers.host then
    res:json({ error = "This page may not open a chat connection." }, 403)
    return true
  end
  local room = req.path:match("^/ws/rooms/([^/]+)$")
  if room and not valid_room(room) then
    res:json({ error = ROOM_RULE }, 400)
    return true
  end
end)

-- Form posts need the session's token.
app.use_post("*", "/*", csrf.middleware({ secret = secret, max_age = 86400 }))

-- Pages ----------------------------------------------------------------------

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.get("/login", function(req, res)
  if user_of(req) then
    return res:redirect("/")
  end
  form_token(req, res)
  render(req, res, "login", {})
end)

app.post("/login", function(req, res)
  local name = trim(form.parse(req.body).name or "")
  local problem = name_problem(name)
  if not req.ctx.session_id then
    problem = "This form had expired. Please send it again."
  end
  if problem then
    form_token(req, res)
    res:status(400)
    return render(req, res, "login", { errors = { problem }, name = name })
  end
  auth.login(req, res, { name = name }, { cookie_opts = cookie_opts })
  res:redirect("/")
end)

app.post("/logout", function(req, res)
  auth.logout(req, res, { cookie_opts = cookie_opts })
  res:redirect("/login")
end)

app.get("/", function(req, res)
  if not user_of(req) then
    return res:redirect("/login")
  end
  index(req, res, 200)
end)

-- The form on / asks for a room by name.
app.get("/join", function(req, res)
  if not user_of(req) then
    return res:redirect("/login")
  end
  local room = trim(req.query.room or ""):lower()
  if not valid_room(room) then
    return index(req, res, 400, { ROOM_RULE })
  end
  res:redirect("/rooms/" .. room)
end)

app.get("/rooms/:room", function(req, res)
  if not user_of(req) then
    return res:redirect("/login")
  end
  local room = req.params.room
  if not valid_room(room) then
    return index(req, res, 404, { ROOM_RULE })
  end
  render(req, res, "room", { room = room, max_message = MAX_MESSAGE })
end)

-- Live updates ---------------------------------------------------------------

-- The online count now, then each change.
app.get("/events/online", function(req, res)
  res:subscribe("online"):event({ online = kv.get("chat:online") or 0 }, "online")
end)

app.ws("/ws/rooms/:room", {
  open = function(ws, req)
    local room, user = req.params.room, ws.ctx.session.name
    ws.ctx.room, ws.ctx.user = room, user
    ws:subscribe("room:" .. room)
    ws:send({ type = "history", room = room, messages = history(room) })
    arrived(user)
    ws.ctx.counted = true
    app.publish("room:" .. room, { type = "join", user = user, at = time.now() })
  end,

  message = function(ws, data, is_binary)
    local text, problem = check_message(data, is_binary)
    if not text then
      return ws:send({ type = "error", error = problem })
    end
    local room, user, at = ws.ctx.room, ws.ctx.user, time.now()
    db.batch(function()
      db.exec("INSERT INTO messages (room, name, text, at) VALUES (?, ?, ?, ?)", { room, user, text, at })
      db.exec(
        "DELETE FROM messages WHERE room = ? AND id NOT IN "
          .. "(SELECT id FROM messages WHERE room = ? ORDER BY id DESC LIMIT ?)",
        { room, room, KEEP }
      )
    end)
    -- Sent once the rows are committed, to every member (the sender too).
    app.publish("room:" .. room, { type = "message", user = user, text = text, at = at })
  end,

  close = function(ws, code, reason)
    if not ws.ctx.counted then
      return -- open failed before it counted this connection
    end
    departed(ws.ctx.user)
    app.publish("room:" .. ws.ctx.room, { type = "leave", user = ws.ctx.user, at = time.now() })
  end,
})
