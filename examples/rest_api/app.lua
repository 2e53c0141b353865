-- rest_api: task CRUD over JSON, with input checked by hull.validate and
-- error messages in English or Hungarian by hull.i18n.
--
--   cove -p 8080 -d tasks.db examples/rest_api/app.lua
--   curl -X POST localhost:8080/tasks -d '{"title":"write docs"}'
--   curl -H 'Accept-Language: hu' localhost:8080/tasks/99

local validate = require("hull.validate")
local i18n = require("hull.i18n")

i18n.load("en", { errors = { not_found = "task not found", invalid_json = "invalid JSON" } })
i18n.load("hu", { errors = { not_found = "a feladat nem található", invalid_json = "érvénytelen JSON" } })

-- A new task needs a title; an update may leave it out (it is kept).
local NEW_TASK = { title = { required = true, type = "string", trim = true, max = 200 } }
local UPDATE = {
  title = {
    type = "string", trim = true, max = 200,
    fn = function(title)
      if title == "" then
        return "must not be empty"
      end
    end,
  },
}

-- Error replies in the request's language. The active locale belongs to
-- the worker, so it is set right before the message is looked up.
local function fail(req, res, key, status)
  i18n.locale(i18n.detect(req.headers["accept-language"]) or "en")
  res:json({ error = i18n.t("errors." .. key) }, status)
end

-- The decoded JSON object of the request, or nil if the body is missing or
-- is not a JSON object.
local function json_body(req)
  local ok, data = pcall(json.decode, req.body)
  if ok and type(data) == "table" then
    return data
  end
  return nil
end

app.get("/tasks", function(req, res)
  res:json(db.query("SELECT * FROM tasks ORDER BY created_at DESC, id DESC"))
end)

app.get("/tasks/:id", function(req, res)
  local task = db.query("SELECT * FROM tasks WHERE id = ?", { req.params.id })[1]
  if not task then
    return fail(req, res, "not_found", 404)
  end
  res:json(task)
end)

app.post("/tasks", function(req, res)
  local body = json_body(req)
  if not body then
    return fail(req, res, "invalid_json", 400)
  end
  local ok, errors = validate.check(body, NEW_TASK)
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  db.exec("INSERT INTO tasks (title, created_at) VALUES (?, ?)", { body.title, time.now() })
  res:json({ id = db.last_id(), title = body.title, done = 0 }, 201)
end)

-- A missing title keeps the old one; `done` is set from the body every time.
app.put("/tasks/:id", function(req, res)
  local body = json_body(req)
  if not body then
    return fail(req, res, "invalid_json", 400)
  end
  local ok, errors = validate.check(body, UPDATE)
  if not ok then
    return res:json({ errors = errors }, 400)
  end
  local changed = db.exec("UPDATE tasks SET title = COALESCE(?, title), done = ? WHERE id = ?",
    { body.title, body.done and 1 or 0, req.params.id })
  if changed == 0 then
    return fail(req, res, "not_found", 404)
  end
  res:json({ ok = true })
end)

app.del("/tasks/:id", function(req, res)
  if db.exec("DELETE FROM tasks WHERE id = ?", { req.params.id }) == 0 then
    return fail(req, res, "not_found", 404)
  end
  res:json({ ok = true })
end)
