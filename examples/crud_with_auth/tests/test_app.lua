-- cove test examples/crud_with_auth — the cases run in order against one
-- database. Handlers run alone by default (as in Hull), so without
-- `middleware = true` every /tasks route answers 401; with it, the
-- session cookie from /login identifies the user.

local function call(method, path, jar, body)
  return test[method](path, { headers = jar, middleware = jar ~= nil,
    body = body and json.encode(body) or nil })
end

-- Register and log in; returns the cookie to send.
local function sign_up(email, name)
  local account = { email = email, password = "password " .. name, name = name }
  test.eq(call("post", "/register", nil, account).status, 201)
  local r = call("post", "/login", nil, account)
  test.eq(r.status, 200)
  return { Cookie = r.headers["set-cookie"]:match("^[^;]+") }
end

local alice, bob

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("every /tasks route needs a session", function()
  test.eq(test.get("/tasks").status, 401)
  test.eq(test.get("/tasks/1").json, { error = "authentication required" })
  test.eq(call("post", "/tasks", nil, { title = "x" }).status, 401)
  test.eq(call("put", "/tasks/1", nil, { done = true }).status, 401)
  test.eq(test.delete("/tasks/1").status, 401)
end)

test("Alice and Bob sign up", function()
  alice = sign_up("alice@example.com", "Alice")
  bob = sign_up("bob@example.com", "Bob")
  test.eq(call("get", "/me", alice).json.name, "Alice")
end)

test("Alice creates and lists her task", function()
  local r = call("post", "/tasks", alice, { title = "Buy milk" })
  test.eq(r.status, 201)
  test.eq(r.json, { id = 1, title = "Buy milk", done = 0 })
  local list = call("get", "/tasks", alice).json
  test.eq(#list, 1)
  test.eq(list[1].title, "Buy milk")
  test.eq(call("get", "/tasks/1", alice).json.title, "Buy milk")
end)

test("Bob sees none of Alice's tasks", function()
  test.eq(call("get", "/tasks", bob).json, {})
  test.eq(call("get", "/tasks/1", bob).json, { error = "task not found" })
  test.eq(call("put", "/tasks/1", bob, { title = "mine now" }).status, 404)
  test.eq(call("delete", "/tasks/1", bob).status, 404)
  test.eq(call("get", "/tasks/1", alice).json.title, "Buy milk")
end)

test("POST /tasks validates its input", function()
  test.eq(test.post("/tasks", { headers = alice, middleware = true, body = "{" }).json,
    { error = "invalid JSON" })
  test.eq(call("post", "/tasks", alice, {}).json, { errors = { title = "is required" } })
end)

test("PUT /tasks/:id updates done and keeps a missing title", function()
  test.eq(call("put", "/tasks/1", alice, { done = true }).json, { ok = true })
  local task = call("get", "/tasks/1", alice).json
  test.eq(task.done, 1)
  test.eq(task.title, "Buy milk")
  test.eq(call("put", "/tasks/1", alice, { title = "" }).status, 400)
end)

test("DELETE /tasks/:id removes the task", function()
  test.eq(call("delete", "/tasks/1", alice).json, { ok = true })
  test.eq(call("delete", "/tasks/1", alice).status, 404)
  test.eq(call("get", "/tasks", alice).json, {})
end)
