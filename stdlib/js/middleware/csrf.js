// hull:middleware:csrf — tokens that tie a form post to its session (Hull
// §10.3, JavaScript flavour: the session id is read from the `hull.sid`
// cookie, tokens are `<hex seconds>.<hmac>`, errors are 403
// {"error":"CSRF token missing"} / {"error":"CSRF token invalid"}).
//
//   app.usePost("*", "/*", csrf.middleware({ secret: CSRF_SECRET }))
//   // pages put req.ctx.csrf_token in a hidden `_csrf` field
//
// The secret must be the same in every worker: take it from env or a
// constant, not from crypto.random at load (each worker loads the app).

import { cookie } from "hull:cookie";
import { crypto } from "hull:crypto";
import { time } from "hull:time";

// The UTF-8 bytes of `s` in hex (HMAC keys are given in hex).
const utf8Hex = (s) =>
  encodeURIComponent(s).replace(/%([0-9A-F]{2})|./gs, (c, byte) =>
    byte ? byte.toLowerCase() : c.charCodeAt(0).toString(16).padStart(2, "0"),
  );

const mac = (sessionId, tsHex, secret) => crypto.hmacSha256(`${sessionId}.${tsHex}`, utf8Hex(secret));

// A token for `sessionId`, valid for maxAge seconds from now.
function generate(sessionId, secret) {
  if (!sessionId || !secret) throw new TypeError("csrf.generate requires sessionId and secret");
  const tsHex = time.now().toString(16);
  return `${tsHex}.${mac(sessionId, tsHex, secret)}`;
}

// True if `token` was made for `sessionId` with `secret` no more than
// maxAge (3600) seconds ago and is not dated more than a minute ahead.
function verify(token, sessionId, secret, maxAge = 3600) {
  if (typeof token !== "string" || !sessionId || !secret) return false;
  const m = /^([0-9a-f]{1,12})\.([0-9a-f]{64})$/.exec(token);
  if (!m) return false;
  const age = time.now() - parseInt(m[1], 16);
  if (age > maxAge || age < -60) return false;
  return crypto.hmacSha256Verify(`${sessionId}.${m[1]}`, utf8Hex(secret), m[2]);
}

// The value of `field` in a form-encoded body, or undefined.
function formField(body, field) {
  if (typeof body !== "string") return undefined;
  const decode = (s) => {
    const plain = s.replaceAll("+", " ");
    try {
      return decodeURIComponent(plain);
    } catch {
      return plain;
    }
  };
  for (const pair of body.split("&")) {
    const eq = pair.indexOf("=");
    if (eq > 0 && decode(pair.slice(0, eq)) === field) return decode(pair.slice(eq + 1));
  }
  return undefined;
}

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

// Post-body middleware. opts: secret (required), maxAge (3600), cookieName
// ("hull.sid"), headerName ("X-CSRF-Token"), fieldName ("_csrf").
// Safe methods get a fresh req.ctx.csrf_token; other methods of a request
// with a session cookie need a valid token in the header or the form field.
function middleware(opts = {}) {
  if (!opts.secret) throw new TypeError("csrf.middleware requires opts.secret");
  const { secret } = opts;
  const maxAge = opts.maxAge ?? 3600;
  const cookieName = opts.cookieName ?? "hull.sid";
  const headerName = (opts.headerName ?? "X-CSRF-Token").toLowerCase();
  const fieldName = opts.fieldName ?? "_csrf";

  return (req, res) => {
    const sessionId = cookie.parse(req.headers.cookie ?? "")[cookieName];
    if (SAFE.has(req.method)) {
      if (sessionId) req.ctx.csrf_token = generate(sessionId, secret);
      return 0;
    }
    if (!sessionId) return 0; // nothing to forge without a session
    const token = req.headers[headerName] ?? formField(req.body, fieldName);
    if (!token) {
      res.json({ error: "CSRF token missing" }, 403);
      return 1;
    }
    if (!verify(token, sessionId, secret, maxAge)) {
      res.json({ error: "CSRF token invalid" }, 403);
      return 1;
    }
    return 0;
  };
}

export const csrf = { generate, verify, middleware };
