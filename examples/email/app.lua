-- email: send mail over SMTP with hull.email and keep a log row per send.
--
--   SMTP_HOST=127.0.0.1 SMTP_PORT=2525 SMTP_TLS=false \
--     cove -p 8080 -d email.db examples/email/app.lua
--   curl -X POST localhost:8080/send \
--     -d '{"to":"ada@example.com","subject":"Hi","body":"Hello!"}'
--   curl localhost:8080/sent
--
-- SMTP settings come from the environment: SMTP_HOST (localhost),
-- SMTP_PORT (587), SMTP_USER, SMTP_PASS, SMTP_FROM (noreply@example.com),
-- SMTP_TLS ("false": plain text, "implicit": TLS from the start, else
-- STARTTLS). The host must be one of the manifest's hosts.

app.manifest({
  env = { "SMTP_HOST", "SMTP_PORT", "SMTP_USER", "SMTP_PASS", "SMTP_FROM", "SMTP_TLS" },
  hosts = { "localhost", "127.0.0.1", "smtp.gmail.com" },
})

local email = require("hull.email")

-- An environment variable, or `default` when it is unset (or env is not
-- available, as under `cove test`).
local function setting(name, default)
  local ok, value = pcall(env.get, name)
  if ok and value ~= nil and value ~= "" then
    return value
  end
  return default
end

local TLS = { ["false"] = false, implicit = 2 }

local SMTP = {
  host = setting("SMTP_HOST", "localhost"),
  port = tonumber(setting("SMTP_PORT", "587")),
  user = setting("SMTP_USER"),
  pass = setting("SMTP_PASS"),
  from = setting("SMTP_FROM", "noreply@example.com"),
  tls = TLS[setting("SMTP_TLS", "starttls")],
}
if SMTP.tls == nil then
  SMTP.tls = true -- STARTTLS
end

-- The decoded JSON object of the request, or nil.
local function json_body(req)
  local ok, data = pcall(json.decode, req.body)
  if ok and type(data) == "table" then
    return data
  end
  return nil
end

app.get("/health", function(req, res)
  res:json({ status = "ok" })
end)

app.post("/send", function(req, res)
  local msg = json_body(req)
  if not msg then
    return res:json({ error = "invalid JSON" }, 400)
  end
  local errors = {}
  for _, field in ipairs({ "to", "subject", "body" }) do
    if type(msg[field]) ~= "string" or msg[field] == "" then
      errors[field] = "is required"
    end
  end
  local cc = msg.cc
  if type(cc) == "string" then
    cc = { cc }
  end
  if cc ~= nil and (type(cc) ~= "table" or #cc == 0) then
    errors.cc = "must be an address or a list of addresses"
  end
  for _, address in ipairs(cc or {}) do
    if type(address) ~= "string" then
      errors.cc = "must be an address or a list of addresses"
    end
  end
  if next(errors) then
    return res:json({ errors = errors }, 400)
  end
  -- The handler waits for the SMTP server without holding up the worker.
  local result = email.send({
    from = SMTP.from, to = msg.to, subject = msg.subject, body = msg.body,
    cc = cc, reply_to = msg.reply_to, content_type = msg.content_type,
    smtp_host = SMTP.host, smtp_port = SMTP.port, smtp_user = SMTP.user,
    smtp_pass = SMTP.pass, smtp_tls = SMTP.tls,
  })
  db.exec([[INSERT INTO email_log (recipient, subject, body, content_type, cc, reply_to,
      status, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)]],
    { msg.to, msg.subject, msg.body, msg.content_type or "text/plain",
      cc and table.concat(cc, ", ") or nil, msg.reply_to,
      result.ok and "sent" or "failed", result.error, time.now() })
  local id = db.last_id()
  if not result.ok then
    log.warn("email " .. id .. " to " .. msg.to .. " failed: " .. tostring(result.error))
    return res:json({ ok = false, id = id, error = result.error })
  end
  res:json({ ok = true, id = id })
end)

-- The last 50 sends, newest first, without their bodies.
app.get("/sent", function(req, res)
  res:json(db.query([[SELECT id, recipient, subject, content_type, cc, reply_to, status,
      error, created_at FROM email_log ORDER BY id DESC LIMIT 50]]))
end)

app.get("/sent/:id", function(req, res)
  local row = db.query("SELECT * FROM email_log WHERE id = ?", { req.params.id })[1]
  if not row then
    return res:json({ error = "not found" }, 404)
  end
  res:json(row)
end)
