-- cove test examples/email — the cases run in order against one database.
-- As in Hull, smtp is not configured under `cove test`: every send fails
-- and is logged as failed. crates/cove/tests/examples_reliability.rs sends
-- to a real (local) SMTP server.

local function send(msg)
  return test.post("/send", { body = json.encode(msg) })
end

test("GET /health", function()
  test.eq(test.get("/health").json, { status = "ok" })
end)

test("POST /send rejects a body that is not JSON", function()
  local r = test.post("/send", { body = "hello" })
  test.eq(r.status, 400)
  test.eq(r.json.error, "invalid JSON")
end)

test("POST /send requires to, subject and body", function()
  local r = send({ cc = { 1 } })
  test.eq(r.status, 400)
  test.eq(r.json.errors, { to = "is required", subject = "is required", body = "is required",
    cc = "must be an address or a list of addresses" })
end)

test("POST /send reports the failure and logs it", function()
  local r = send({ to = "ada@example.com", subject = "Hi", body = "Hello!", cc = "bob@example.com",
    reply_to = "team@example.com" })
  test.eq(r.status, 200)
  test.eq(r.json.ok, false)
  test.eq(r.json.id, 1)
  test.ok(r.json.error:find("not configured", 1, true), r.json.error)
end)

test("GET /sent lists sends without their bodies", function()
  local sent = test.get("/sent").json
  test.eq(#sent, 1)
  test.eq(sent[1].recipient, "ada@example.com")
  test.eq(sent[1].status, "failed")
  test.eq(sent[1].cc, "bob@example.com")
  test.eq(sent[1].body, nil)
end)

test("GET /sent/:id shows one send in full", function()
  local row = test.get("/sent/1").json
  test.eq(row.body, "Hello!")
  test.eq(row.subject, "Hi")
  test.eq(row.reply_to, "team@example.com")
  test.eq(row.content_type, "text/plain")
end)

test("GET /sent/:id of an unknown send is 404", function()
  local r = test.get("/sent/99")
  test.eq(r.status, 404)
  test.eq(r.json.error, "not found")
end)

test("sends are listed newest first", function()
  send({ to = "grace@example.com", subject = "Re: Hi", body = "<p>Hi!</p>", content_type = "text/html" })
  local sent = test.get("/sent").json
  test.eq(#sent, 2)
  test.eq(sent[1].recipient, "grace@example.com")
  test.eq(sent[1].content_type, "text/html")
end)
