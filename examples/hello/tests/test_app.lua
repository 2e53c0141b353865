-- cove test examples/hello

test("GET /health reports ok", function()
  local r = test.get("/health")
  test.eq(r.status, 200)
  test.eq(r.json.status, "ok")
  test.eq(r.json.runtime, "lua")
  test.eq(r.headers["content-type"], "application/json")
end)

test("GET / records a visit", function()
  test.eq(test.get("/").json.lang, "en")
  test.eq(test.get("/", { headers = { ["Accept-Language"] = "hu-HU" } }).json.lang, "hu")
  local visits = test.get("/visits").json
  test.eq(#visits, 2)
  test.eq(visits[1].path, "/")
end)

test("greets in two languages", function()
  test.eq(test.get("/greet/World").json, { greeting = "Hello, World!", lang = "en" })
  test.eq(test.get("/greet/Anna?lang=hu").json, { greeting = "Szia, Anna!", lang = "hu" })
end)

test("POST /echo returns the body", function()
  test.eq(test.post("/echo", { body = "hi" }).json, { body = "hi" })
  test.eq(test.post("/echo").json, {})
end)

test("unknown routes and methods", function()
  test.eq(test.get("/nope").status, 404)
  test.eq(test.delete("/health").status, 405)
end)
