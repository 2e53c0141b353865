-- hull.email: send one email through SMTP or an HTTP email API
-- (Postmark, SendGrid, Resend) with one set of options (Hull §6.8).
--
--   local email = require("hull.email")
--   local r = email.send({ from = "a@x.org", to = "b@y.org", subject = "Hi",
--     body = "Hello", smtp_host = "smtp.x.org", smtp_user = u, smtp_pass = p })
--   if not r.ok then log.warn(r.error) end
--
-- The SMTP host or the provider's API host must be in the manifest's
-- `hosts`. Failures come back as {ok = false, error = "..."}; nothing
-- raises, so an app can log the outcome of every send.

local email = {}

local function is_html(opts)
  return opts.content_type == "text/html"
end

-- Each API provider: where to post, and the request body and headers.
local PROVIDERS = {
  postmark = {
    url = "https://api.postmarkapp.com/email",
    headers = function(key) return { ["X-Postmark-Server-Token"] = key } end,
    body = function(o)
      local b = { From = o.from, To = o.to, Subject = o.subject, ReplyTo = o.reply_to }
      b[is_html(o) and "HtmlBody" or "TextBody"] = o.body
      if o.cc and #o.cc > 0 then
        b.Cc = table.concat(o.cc, ", ")
      end
      return b
    end,
  },
  sendgrid = {
    url = "https://api.sendgrid.com/v3/mail/send",
    headers = function(key) return { Authorization = "Bearer " .. key } end,
    body = function(o)
      local to = { to = { { email = o.to } } }
      if o.cc and #o.cc > 0 then
        to.cc = {}
        for i, address in ipairs(o.cc) do
          to.cc[i] = { email = address }
        end
      end
      return {
        personalizations = { to },
        from = { email = o.from },
        subject = o.subject,
        content = { { type = o.content_type or "text/plain", value = o.body } },
        reply_to = o.reply_to and { email = o.reply_to } or nil,
      }
    end,
  },
  resend = {
    url = "https://api.resend.com/emails",
    headers = function(key) return { Authorization = "Bearer " .. key } end,
    body = function(o)
      local b = { from = o.from, to = { o.to }, subject = o.subject, reply_to = o.reply_to }
      b[is_html(o) and "html" or "text"] = o.body
      if o.cc and #o.cc > 0 then
        b.cc = o.cc
      end
      return b
    end,
  },
}

local function via_smtp(opts)
  if opts.smtp_host == nil or opts.smtp_host == "" then
    return { ok = false, error = "smtp_host required" }
  end
  local tls = opts.smtp_tls
  if tls == nil then
    tls = true -- STARTTLS
  end
  local ok, r = pcall(smtp.send, {
    host = opts.smtp_host, port = opts.smtp_port or 587,
    username = opts.smtp_user, password = opts.smtp_pass, tls = tls,
    from = opts.from, to = opts.to, subject = opts.subject, body = opts.body,
    cc = opts.cc, reply_to = opts.reply_to, content_type = opts.content_type,
  })
  if not ok then
    return { ok = false, error = tostring(r) }
  end
  return r
end

local function via_api(name, provider, opts)
  if opts.api_key == nil or opts.api_key == "" then
    return { ok = false, error = name .. ": api_key required" }
  end
  local headers = provider.headers(opts.api_key)
  headers["Content-Type"] = "application/json"
  headers["Accept"] = "application/json"
  -- api_url (a Cove addition) points the request elsewhere: a proxy, a
  -- regional endpoint, a local test server.
  local ok, r = pcall(http.post, opts.api_url or provider.url,
    json.encode(provider.body(opts)), { headers = headers })
  if not ok then
    return { ok = false, error = name .. ": " .. tostring(r) }
  end
  if r.status >= 200 and r.status < 300 then
    return { ok = true }
  end
  return { ok = false, error = name .. ": " .. r.body }
end

-- Send `opts` → {ok = true} or {ok = false, error = "..."}.
-- Common: from, to, subject, body (required), cc (list), reply_to,
-- content_type ("text/plain"), provider ("smtp", "postmark", "sendgrid",
-- "resend"). SMTP: smtp_host, smtp_port (587), smtp_user, smtp_pass,
-- smtp_tls (true = STARTTLS, false = plain, 2 = implicit TLS). APIs:
-- api_key, api_url.
function email.send(opts)
  if type(opts) ~= "table" then
    return { ok = false, error = "opts required" }
  end
  for _, field in ipairs({ "from", "to", "subject", "body" }) do
    if opts[field] == nil or opts[field] == "" then
      return { ok = false, error = field .. " required" }
    end
  end
  local name = opts.provider or "smtp"
  if name == "smtp" then
    return via_smtp(opts)
  end
  local provider = PROVIDERS[name]
  if provider == nil then
    return { ok = false, error = "unknown provider: " .. tostring(name) }
  end
  return via_api(name, provider, opts)
end

return email
