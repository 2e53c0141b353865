-- rest_api: task CRUD over JSON, with input validation.
--
--   cove -p 8080 -d tasks.db examples/rest_api/app.lua
--   curl -X POST localhost:8080/tasks -d '{"title":"write docs"}'

-- The decoded JSON object of the request, or nil if the body is missing or
-- is not a JSON object.
local function json_body(req)
  local ok, data = pcall(json.decode, req.body)
  if ok and type(data) == "table" then
    return data
  end
  return nil
end

local function not_found(res)
  res:json({ error = "task not found" }, 404)
end

app.get("/tasks", function(req, res)
  res:json(db.query("SELECT * FROM tasks ORDER BY created_at DESC, id DESC"))
end)

app.get("/tasks/:id", function(req, res)
  local task = db.query("SELECT * FROM tasks WHERE id = ?", { req.params.id })[1]
  if not task then
    return not_found(res)
  end
  res:json(task)
end)

app.post("/tasks", function(req, res)
  local body = json_body(req)
  if not body then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local title = body.title
  if type(title) ~= "string" or title == "" then
    return res:json({ errors = { title = "is required" } }, 400)
  end
  db.exec("INSERT INTO tasks (title, created_at) VALUES (?, ?)", { title, time.now() })
  res:json({ id = db.last_id(), title = title, done = 0 }, 201)
end)

-- A missing title keeps the old one; `done` is set from the body every time.
app.put("/tasks/:id", function(req, res)
  local body = json_body(req)
  if not body then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local changed = db.exec("UPDATE tasks SET title = COALESCE(?, title), done = ? WHERE id = ?",
    { body.title, body.done and 1 or 0, req.params.id })
  if changed == 0 then
    return not_found(res)
  end
  res:json({ ok = true })
end)

app.del("/tasks/:id", function(req, res)
  if db.exec("DELETE FROM tasks WHERE id = ?", { req.params.id }) == 0 then
    return not_found(res)
  end
  res:json({ ok = true })
end)
