// hull:email — send one email through SMTP or an HTTP email API
// (Postmark, SendGrid, Resend) with one set of options (Hull §6.8).
//
//   import email from "hull:email";
//   const r = await email.sendAsync({ from: "a@x.org", to: "b@y.org",
//     subject: "Hi", body: "Hello", smtp_host: "smtp.x.org" });
//   if (!r.ok) console.warn(r.error);
//
// Option names are snake_case, as in Lua (and Hull). The SMTP host or the
// provider's API host must be in the manifest's `hosts`. Failures come back
// as {ok: false, error}; nothing throws, so an app can log the outcome of
// every send. send() is Hull's synchronous form and blocks the worker while
// it sends; `await email.sendAsync(opts)` (Cove) leaves the worker free.

import { http } from "hull:http";
import { smtp } from "hull:smtp";

const isHtml = (o) => o.content_type === "text/html";
const hasCc = (o) => Array.isArray(o.cc) && o.cc.length > 0;

// Each API provider: where to post, and the request body and headers.
const PROVIDERS = {
  postmark: {
    url: "https://api.postmarkapp.com/email",
    headers: (key) => ({ "X-Postmark-Server-Token": key }),
    body: (o) => ({
      From: o.from,
      To: o.to,
      Subject: o.subject,
      [isHtml(o) ? "HtmlBody" : "TextBody"]: o.body,
      ...(hasCc(o) ? { Cc: o.cc.join(", ") } : {}),
      ...(o.reply_to ? { ReplyTo: o.reply_to } : {}),
    }),
  },
  sendgrid: {
    url: "https://api.sendgrid.com/v3/mail/send",
    headers: (key) => ({ Authorization: `Bearer ${key}` }),
    body: (o) => ({
      personalizations: [
        { to: [{ email: o.to }], ...(hasCc(o) ? { cc: o.cc.map((email) => ({ email })) } : {}) },
      ],
      from: { email: o.from },
      subject: o.subject,
      content: [{ type: o.content_type ?? "text/plain", value: o.body }],
      ...(o.reply_to ? { reply_to: { email: o.reply_to } } : {}),
    }),
  },
  resend: {
    url: "https://api.resend.com/emails",
    headers: (key) => ({ Authorization: `Bearer ${key}` }),
    body: (o) => ({
      from: o.from,
      to: [o.to],
      subject: o.subject,
      [isHtml(o) ? "html" : "text"]: o.body,
      ...(hasCc(o) ? { cc: o.cc } : {}),
      ...(o.reply_to ? { reply_to: o.reply_to } : {}),
    }),
  },
};

const blank = (v) => v === undefined || v === null || v === "";

// How to send `opts`: {done: result} when there is nothing to send, else
// {smtp: options} or {post: [url, body, opts], name}.
function plan(opts) {
  if (typeof opts !== "object" || opts === null) return { done: { ok: false, error: "opts required" } };
  for (const field of ["from", "to", "subject", "body"]) {
    if (blank(opts[field])) return { done: { ok: false, error: `${field} required` } };
  }
  const name = opts.provider ?? "smtp";
  if (name === "smtp") {
    if (blank(opts.smtp_host)) return { done: { ok: false, error: "smtp_host required" } };
    return {
      smtp: {
        host: opts.smtp_host,
        port: opts.smtp_port ?? 587,
        username: opts.smtp_user,
        password: opts.smtp_pass,
        tls: opts.smtp_tls ?? true, // STARTTLS
        from: opts.from,
        to: opts.to,
        subject: opts.subject,
        body: opts.body,
        cc: opts.cc,
        reply_to: opts.reply_to,
        content_type: opts.content_type,
      },
    };
  }
  const provider = Object.hasOwn(PROVIDERS, name) ? PROVIDERS[name] : undefined;
  if (!provider) return { done: { ok: false, error: `unknown provider: ${name}` } };
  if (blank(opts.api_key)) return { done: { ok: false, error: `${name}: api_key required` } };
  const headers = { ...provider.headers(opts.api_key), "Content-Type": "application/json", Accept: "application/json" };
  // api_url (a Cove addition) points the request elsewhere: a proxy, a
  // regional endpoint, a local test server.
  return { name, post: [opts.api_url ?? provider.url, JSON.stringify(provider.body(opts)), { headers }] };
}

function apiResult(name, r) {
  if (r.status >= 200 && r.status < 300) return { ok: true };
  return { ok: false, error: `${name}: ${r.body}` };
}

// Send `opts` → {ok: true} or {ok: false, error}. Common: from, to,
// subject, body (required), cc (array), reply_to, content_type
// ("text/plain"), provider ("smtp", "postmark", "sendgrid", "resend").
// SMTP: smtp_host, smtp_port (587), smtp_user, smtp_pass, smtp_tls (true =
// STARTTLS, false = plain, 2 = implicit TLS). APIs: api_key, api_url.
function send(opts) {
  const p = plan(opts);
  if (p.done) return p.done;
  try {
    return p.smtp ? smtp.send(p.smtp) : apiResult(p.name, http.post(...p.post));
  } catch (e) {
    return { ok: false, error: p.smtp ? e.message : `${p.name}: ${e.message}` };
  }
}

// send() without blocking the worker.
async function sendAsync(opts) {
  const p = plan(opts);
  if (p.done) return p.done;
  try {
    return p.smtp ? await smtp.sendAsync(p.smtp) : apiResult(p.name, await http.postAsync(...p.post));
  } catch (e) {
    return { ok: false, error: p.smtp ? e.message : `${p.name}: ${e.message}` };
  }
}

const email = { send, sendAsync };
export default email;
