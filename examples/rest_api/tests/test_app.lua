-- cove test examples/rest_api — the cases run in order against one database.

local function create(title)
  return test.post("/tasks", { body = json.encode({ title = title }) })
end

test("starts empty", function()
  test.eq(test.get("/tasks").json, {})
end)

test("POST /tasks creates a task", function()
  local r = create("write docs")
  test.eq(r.status, 201)
  test.eq(r.json, { id = 1, title = "write docs", done = 0 })
end)

test("POST /tasks validates its input", function()
  test.eq(test.post("/tasks", { body = "not json" }).status, 400)
  local r = create("")
  test.eq(r.status, 400)
  test.eq(r.json.errors.title, "is required")
end)

test("POST /tasks explains each invalid title (hull.validate)", function()
  test.eq(test.post("/tasks", { body = '{"title": 7}' }).json.errors.title, "must be a string")
  test.eq(create(string.rep("x", 201)).json.errors.title, "must be at most 200 characters")
  test.eq(create("   ").json.errors.title, "is required")
  test.eq(create("  trimmed  ").json.title, "trimmed")
  test.eq(test.delete("/tasks/2").status, 200)
end)

test("errors follow Accept-Language (hull.i18n)", function()
  local hu = { headers = { ["Accept-Language"] = "hu-HU,hu;q=0.9" } }
  test.eq(test.get("/tasks/99", hu).json.error, "a feladat nem található")
  test.eq(test.post("/tasks", { body = "{", headers = hu.headers }).json.error, "érvénytelen JSON")
  test.eq(test.get("/tasks/99").json.error, "task not found")
end)

test("GET /tasks/:id reads one task", function()
  test.eq(test.get("/tasks/1").json.title, "write docs")
  test.eq(test.get("/tasks/99").status, 404)
end)

test("PUT /tasks/:id updates", function()
  test.eq(test.put("/tasks/1", { body = '{"done": true}' }).json, { ok = true })
  local task = test.get("/tasks/1").json
  test.eq(task.done, 1)
  test.eq(task.title, "write docs")
end)

test("PUT /tasks/:id keeps a missing title and refuses an empty one", function()
  test.eq(test.put("/tasks/1", { body = '{"title": "  renamed "}' }).json, { ok = true })
  test.eq(test.get("/tasks/1").json.title, "renamed")
  local r = test.put("/tasks/1", { body = '{"title": ""}' })
  test.eq(r.status, 400)
  test.eq(r.json.errors.title, "must not be empty")
  test.eq(test.put("/tasks/99", { body = "{}" }).status, 404)
end)

test("DELETE /tasks/:id removes", function()
  test.eq(test.delete("/tasks/1").status, 200)
  test.eq(test.delete("/tasks/1").status, 404)
  test.eq(#db.query("SELECT * FROM tasks"), 0)
end)
