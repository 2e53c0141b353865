-- {{name}}: a Cove app. `cove dev` serves it and reloads on every change;
-- `cove test` runs tests/test_app.lua.
--
-- Cove provides the globals app (routes), db (SQLite), json, time, log and env.
-- The notes table comes from migrations/001_init.sql.

-- The request body as a JSON object, or nil if it is missing or not one.
local function json_body(req)
  local ok, data = pcall(json.decode, req.body or "")
  if ok and type(data) == "table" then
    return data
  end
  return nil
end

local function not_found(res)
  res:json({ error = "note not found" }, 404)
end

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.get("/notes", function(req, res)
  res:json(db.query("SELECT id, text, created_at FROM notes ORDER BY id"))
end)

app.get("/notes/:id", function(req, res)
  local note = db.query("SELECT id, text, created_at FROM notes WHERE id = ?", { req.params.id })[1]
  if not note then
    return not_found(res)
  end
  res:json(note)
end)

app.post("/notes", function(req, res)
  local body = json_body(req)
  if not body or type(body.text) ~= "string" or body.text == "" then
    return res:json({ error = 'send a JSON object with a non-empty "text"' }, 400)
  end
  db.exec("INSERT INTO notes (text, created_at) VALUES (?, ?)", { body.text, time.now() })
  local id = db.last_id()
  log.info("created note " .. id)
  res:json({ id = id, text = body.text }, 201)
end)

app.del("/notes/:id", function(req, res)
  if db.exec("DELETE FROM notes WHERE id = ?", { req.params.id }) == 0 then
    return not_found(res)
  end
  res:json({ ok = true })
end)
