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

test("DELETE /tasks/:id removes", function()
  test.eq(test.delete("/tasks/1").status, 200)
  test.eq(test.delete("/tasks/1").status, 404)
  test.eq(#db.query("SELECT * FROM tasks"), 0)
end)
