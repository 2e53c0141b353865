// hull:middleware:auth — session-cookie and JWT authentication (Hull §10.5,
// JavaScript flavour: cookie `hull.sid`, ctx keys `sessionId`/`session` and
// `token`/`claims`).
//
//   app.use("*", "/*", auth.sessionMiddleware({ optional: true }))
//   auth.login(req, res, { userId: id })   // in POST /login
//   auth.logout(req, res)                  // in POST /logout
//
// Sessions are rows in the database (hull:middleware:session), so a cookie
// set by one worker (or process) is honoured by every other.

import { cookie } from "hull:cookie";
import { jwt } from "hull:jwt";
import { session } from "hull:middleware:session";

const DEFAULT_COOKIE = "hull.sid";

function deny(res, message) {
  res.json({ error: message }, 401);
  return 1;
}

// True if `path` is one of `patterns`: exact paths, or `/prefix/*` for
// `/prefix` and everything under it.
function excluded(path, patterns = []) {
  return patterns.some((p) =>
    p.endsWith("/*") ? path === p.slice(0, -2) || path.startsWith(p.slice(0, -1)) : path === p,
  );
}

const cookieOf = (req, name) => cookie.parse(req.headers.cookie ?? "")[name];

// opts: cookieName ("hull.sid"), optional (false), loginPath (redirect there
// instead of 401), excludePaths, cookieOpts (for clearing a stale cookie).
// A valid session sets req.ctx.sessionId and req.ctx.session (its data).
function sessionMiddleware(opts = {}) {
  const name = opts.cookieName ?? DEFAULT_COOKIE;
  return (req, res) => {
    if (excluded(req.path, opts.excludePaths)) return 0;
    const id = cookieOf(req, name);
    const data = id ? session.load(id) : null;
    if (data !== null) {
      req.ctx.sessionId = id;
      req.ctx.session = data;
      return 0;
    }
    // The cookie names a session that is gone: tell the browser to drop it.
    if (id) res.header("Set-Cookie", cookie.clear(name, opts.cookieOpts));
    if (opts.optional) return 0;
    if (opts.loginPath) {
      res.redirect(opts.loginPath);
      return 1;
    }
    return deny(res, id ? "session expired" : "authentication required");
  };
}

// opts: secret (required), optional, excludePaths. Expects
// `Authorization: Bearer <jwt>`; a valid token sets req.ctx.token and
// req.ctx.claims (its payload).
function jwtMiddleware(opts = {}) {
  if (!opts.secret) throw new TypeError("auth.jwtMiddleware requires opts.secret");
  return (req, res) => {
    if (excluded(req.path, opts.excludePaths)) return 0;
    const header = req.headers.authorization ?? "";
    if (!header.startsWith("Bearer ")) return opts.optional ? 0 : deny(res, "missing bearer token");
    const token = header.slice("Bearer ".length);
    const claims = jwt.verify(token, opts.secret);
    // Hull's jwt.verify returns [null, reason] on failure.
    if (Array.isArray(claims)) return opts.optional ? 0 : deny(res, claims[1]);
    req.ctx.token = token;
    req.ctx.claims = claims;
    return 0;
  };
}

// Start a session holding `userData` and send its cookie → the session id.
// opts: cookieName, cookieOpts (hull:cookie options; default Path=/;
// HttpOnly; Secure; SameSite=Lax), ttl (the cookie's maxAge unless
// cookieOpts sets one). A session the request already carried is ended
// first, so a planted session id never becomes a login.
function login(req, res, userData, opts = {}) {
  const name = opts.cookieName ?? DEFAULT_COOKIE;
  const old = cookieOf(req, name);
  if (old) session.destroy(old);
  const id = session.create(userData);
  const cookieOpts = { ...opts.cookieOpts };
  if (opts.ttl !== undefined && cookieOpts.maxAge === undefined) cookieOpts.maxAge = opts.ttl;
  res.header("Set-Cookie", cookie.serialize(name, id, cookieOpts));
  return id;
}

// End the request's session and clear its cookie. opts: cookieName, cookieOpts.
function logout(req, res, opts = {}) {
  const name = opts.cookieName ?? DEFAULT_COOKIE;
  const id = cookieOf(req, name) ?? req.ctx.sessionId;
  if (id) session.destroy(id);
  res.header("Set-Cookie", cookie.clear(name, opts.cookieOpts));
}

export const auth = { sessionMiddleware, jwtMiddleware, login, logout };
