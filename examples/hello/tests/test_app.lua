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

test("Accept-Language picks the language by q-value (hull.i18n)", function()
  local function lang(accept)
    return test.get("/greet/Ann", { headers = { ["Accept-Language"] = accept } }).json
  end
  test.eq(lang("en;q=0.5, hu;q=0.8"), { greeting = "Szia, Ann!", lang = "hu" })
  test.eq(lang("fr, en-GB;q=0.9"), { greeting = "Hello, Ann!", lang = "en" })
  test.eq(lang("fr"), { greeting = "Hello, Ann!", lang = "en" })
  test.eq(test.get("/?lang=hu").json.message, "Szia a Cove + Lua-ból!")
end)

test("POST /echo returns the body", function()
  test.eq(test.post("/echo", { body = "hi" }).json, { body = "hi" })
  test.eq(test.post("/echo").json, {})
end)

test("unknown routes and methods", function()
  test.eq(test.get("/nope").status, 404)
  test.eq(test.delete("/health").status, 405)
end)
