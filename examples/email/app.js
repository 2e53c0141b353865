// email: send mail over SMTP with hull:email and keep a log row per send.
// The JavaScript twin of app.lua.
//
//   SMTP_HOST=127.0.0.1 SMTP_PORT=2525 SMTP_TLS=false \
//     cove -p 8080 -d email.db examples/email/app.js
//   curl -X POST localhost:8080/send \
//     -d '{"to":"ada@example.com","subject":"Hi","body":"Hello!"}'
//   curl localhost:8080/sent
//
// SMTP settings come from the environment: SMTP_HOST (localhost),
// SMTP_PORT (587), SMTP_USER, SMTP_PASS, SMTP_FROM (noreply@example.com),
// SMTP_TLS ("false": plain text, "implicit": TLS from the start, else
// STARTTLS). The host must be one of the manifest's hosts.

import { app } from "hull:app";
import { db } from "hull:db";
import { env } from "hull:env";
import { log } from "hull:log";
import { time } from "hull:time";
import email from "hull:email";

app.manifest({
  env: ["SMTP_HOST", "SMTP_PORT", "SMTP_USER", "SMTP_PASS", "SMTP_FROM", "SMTP_TLS"],
  hosts: ["localhost", "127.0.0.1", "smtp.gmail.com"],
});

// An environment variable, or `fallback` when it is unset (or env is not
// available, as under `cove test`).
function setting(name, fallback = undefined) {
  try {
    return env.get(name) || fallback;
  } catch {
    return fallback;
  }
}

const TLS = { false: false, implicit: 2 };

const SMTP = {
  host: setting("SMTP_HOST", "localhost"),
  port: Number(setting("SMTP_PORT", "587")),
  user: setting("SMTP_USER"),
  pass: setting("SMTP_PASS"),
  from: setting("SMTP_FROM", "noreply@example.com"),
  tls: TLS[setting("SMTP_TLS", "starttls")] ?? true, // true: STARTTLS
};

// The decoded JSON object of the request, or null.
function jsonBody(req) {
  try {
    const data = JSON.parse(req.body ?? "");
    return typeof data === "object" && data !== null ? data : null;
  } catch {
    return null;
  }
}

app.get("/health", (req, res) => res.json({ status: "ok" }));

app.post("/send", async (req, res) => {
  const msg = jsonBody(req);
  if (!msg) return res.json({ error: "invalid JSON" }, 400);
  const errors = {};
  for (const field of ["to", "subject", "body"]) {
    if (typeof msg[field] !== "string" || msg[field] === "") errors[field] = "is required";
  }
  const cc = typeof msg.cc === "string" ? [msg.cc] : msg.cc;
  const goodCc = Array.isArray(cc) && cc.length > 0 && cc.every((a) => typeof a === "string");
  if (cc !== undefined && cc !== null && !goodCc) errors.cc = "must be an address or a list of addresses";
  if (Object.keys(errors).length > 0) return res.json({ errors }, 400);
  // Awaiting the async form keeps the worker serving other requests while
  // the SMTP server answers.
  const result = await email.sendAsync({
    from: SMTP.from,
    to: msg.to,
    subject: msg.subject,
    body: msg.body,
    cc: cc ?? undefined,
    reply_to: msg.reply_to,
    content_type: msg.content_type,
    smtp_host: SMTP.host,
    smtp_port: SMTP.port,
    smtp_user: SMTP.user,
    smtp_pass: SMTP.pass,
    smtp_tls: SMTP.tls,
  });
  db.exec(
    `INSERT INTO email_log (recipient, subject, body, content_type, cc, reply_to,
       status, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      msg.to,
      msg.subject,
      msg.body,
      msg.content_type ?? "text/plain",
      goodCc ? cc.join(", ") : null,
      msg.reply_to ?? null,
      result.ok ? "sent" : "failed",
      result.error ?? null,
      time.now(),
    ],
  );
  const id = db.lastId();
  if (!result.ok) {
    log.warn(`email ${id} to ${msg.to} failed: ${result.error}`);
    return res.json({ ok: false, id, error: result.error });
  }
  res.json({ ok: true, id });
});

// The last 50 sends, newest first, without their bodies.
app.get("/sent", (req, res) => {
  res.json(
    db.query(`SELECT id, recipient, subject, content_type, cc, reply_to, status,
       error, created_at FROM email_log ORDER BY id DESC LIMIT 50`),
  );
});

app.get("/sent/:id", (req, res) => {
  const [row] = db.query("SELECT * FROM email_log WHERE id = ?", [req.params.id]);
  if (!row) return res.json({ error: "not found" }, 404);
  res.json(row);
});
