-- `cove test` loads the app once against an in-memory database with
-- migrations/ applied, then runs these cases in order: they share that
-- database. test.get/post/put/patch/delete call the route handler in-process
-- and return { status, body, json, headers }.

test("GET /health is ok", function()
  local r = test.get("/health")
  test.eq(r.status, 200)
  test.eq(r.json, { status = "ok" })
  test.eq(r.headers["content-type"], "application/json")
end)

test("POST /notes creates a note", function()
  local r = test.post("/notes", { body = json.encode({ text = "hello" }) })
  test.eq(r.status, 201)
  test.eq(r.json, { id = 1, text = "hello" })
end)

test("POST /notes refuses a note without text", function()
  test.eq(test.post("/notes", { body = "not json" }).status, 400)
  test.eq(test.post("/notes", { body = json.encode({ text = "" }) }).status, 400)
end)

test("GET /notes lists, GET /notes/:id reads", function()
  local notes = test.get("/notes").json
  test.eq(#notes, 1)
  test.eq(notes[1].text, "hello")
  test.eq(test.get("/notes/1").json.text, "hello")
  test.eq(test.get("/notes/99").status, 404)
end)

test("DELETE /notes/:id removes", function()
  test.eq(test.delete("/notes/1").json, { ok = true })
  test.eq(test.delete("/notes/1").status, 404)
  test.eq(#db.query("SELECT id FROM notes"), 0)
end)
