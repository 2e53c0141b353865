-- crud_with_auth: per-user tasks behind session-cookie auth. The account
-- routes are those of examples/auth; every /tasks route needs a session
-- and sees only its user's tasks (another user's task is a 404).
--
--   cove -p 8080 -d tasks.db examples/crud_with_auth/app.lua
--   curl -X POST localhost:8080/register -d '{"email":"a@example.com","password":"secret123","name":"Ann"}'
--   curl -c jar -X POST localhost:8080/login -d '{"email":"a@example.com","password":"secret123"}'
--   curl -b jar -X POST localhost:8080/tasks -d '{"title":"write docs"}'
--   curl -b jar localhost:8080/tasks

local session = require("hull.middleware.session")
local auth = require("hull.middleware.auth")
local validate = require("hull.validate")

session.init({ ttl = 3600 })

-- Every request: a valid `hull_session` cookie puts the session in
-- req.ctx.session; without one the request goes on, and the routes that
-- need a user answer 401 themselves (so that `cove test`, which runs
-- handlers only, sees the same 401s as Hull's runner).
app.use("*", "/*", auth.session_middleware({ optional = true }))

-- The decoded JSON object of the request, or nil.
local function json_body(req)
  local ok, data = pcall(json.decode, req.body)
  if ok and type(data) == "table" then
    return data
  end
  return nil
end

-- A login for an unknown email still checks a password against this hash,
-- so the answer takes as long as for a known one and does not tell which
-- emails have accounts.
local NO_USER_HASH =
  "pbkdf2:100000:00000000000000000000000000000000:9beab6492276d614954f6018c2de628fa02d9ec0b69d36b1731089aae559d904"

-- Accounts ------------------------------------------------------------------

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.post("/register", function(req, res)
  local body = json_body(req)
  if not body then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local ok, errors = validate.check(body, {
    email = { required = true, type = "string", trim = true, email = true },
    password = { required = true, type = "string", min = 8 },
    name = { required = true, type = "string", trim = true },
  })
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  local function taken()
    return db.query("SELECT 1 FROM users WHERE email = ?", { body.email })[1] ~= nil
  end
  if taken() then
    return res:json({ error = "email already registered" }, 409)
  end
  -- The hash takes a while (other requests are served meanwhile), so it
  -- is made outside the transaction, which checks the email again.
  local hash = crypto.hash_password(body.password)
  local id = db.batch(function()
    if taken() then
      return nil
    end
    db.exec("INSERT INTO users (email, password_hash, name, created_at) VALUES (?, ?, ?, ?)",
      { body.email, hash, body.name, time.now() })
    return db.last_id()
  end)
  if not id then
    return res:json({ error = "email already registered" }, 409)
  end
  res:json({ id = id, email = body.email, name = body.name }, 201)
end)

app.post("/login", function(req, res)
  local body = json_body(req)
  if not body then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local ok, errors = validate.check(body, {
    email = { required = true, type = "string", trim = true },
    password = { required = true, type = "string" },
  })
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  local user = db.query("SELECT id, email, name, password_hash FROM users WHERE email = ?",
    { body.email })[1]
  local valid = crypto.verify_password(body.password, user and user.password_hash or NO_USER_HASH)
  if not (user and valid) then
    return res:json({ error = "invalid credentials" }, 401)
  end
  auth.login(req, res, { user_id = user.id, email = user.email })
  res:json({ id = user.id, email = user.email, name = user.name })
end)

app.post("/logout", function(req, res)
  if not req.ctx.session then
    return res:json({ error = "authentication required" }, 401)
  end
  auth.logout(req, res)
  res:json({ ok = true })
end)

app.get("/me", function(req, res)
  local s = req.ctx.session
  if not s then
    return res:json({ error = "authentication required" }, 401)
  end
  local user = db.query("SELECT id, email, name, created_at FROM users WHERE id = ?",
    { s.user_id })[1]
  if not user then
    return res:json({ error = "user not found" }, 404)
  end
  res:json(user)
end)

-- Tasks ---------------------------------------------------------------------

-- Wraps a handler that needs a signed-in user: it gets the user's id as a
-- third argument; without a session the answer is 401.
local function with_user(handler)
  return function(req, res)
    local s = req.ctx.session
    if not s then
      return res:json({ error = "authentication required" }, 401)
    end
    return handler(req, res, s.user_id)
  end
end

local function task_not_found(res)
  res:json({ error = "task not found" }, 404)
end

app.get("/tasks", with_user(function(req, res, uid)
  res:json(db.query("SELECT id, title, done, created_at FROM tasks WHERE user_id = ? "
    .. "ORDER BY created_at DESC, id DESC", { uid }))
end))

app.get("/tasks/:id", with_user(function(req, res, uid)
  local task = db.query("SELECT id, title, done, created_at FROM tasks WHERE id = ? AND user_id = ?",
    { req.params.id, uid })[1]
  if not task then
    return task_not_found(res)
  end
  res:json(task)
end))

app.post("/tasks", with_user(function(req, res, uid)
  local body = json_body(req)
  if not body then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local ok, errors = validate.check(body, { title = { required = true, type = "string", trim = true } })
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  db.exec("INSERT INTO tasks (user_id, title, created_at) VALUES (?, ?, ?)",
    { uid, body.title, time.now() })
  res:json({ id = db.last_id(), title = body.title, done = 0 }, 201)
end))

-- A missing title keeps the old one; `done` is set from the body every time.
app.put("/tasks/:id", with_user(function(req, res, uid)
  local body = json_body(req)
  if not body then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local ok, errors = validate.check(body, { title = { type = "string", trim = true, min = 1 } })
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  local changed = db.exec("UPDATE tasks SET title = COALESCE(?, title), done = ? "
    .. "WHERE id = ? AND user_id = ?", { body.title, body.done and 1 or 0, req.params.id, uid })
  if changed == 0 then
    return task_not_found(res)
  end
  res:json({ ok = true })
end))

app.del("/tasks/:id", with_user(function(req, res, uid)
  if db.exec("DELETE FROM tasks WHERE id = ? AND user_id = ?", { req.params.id, uid }) == 0 then
    return task_not_found(res)
  end
  res:json({ ok = true })
end))
