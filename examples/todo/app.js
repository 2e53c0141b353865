// todo: a server-rendered todo list (hull-api §12.9). Accounts with hashed
// passwords, sessions, CSRF-protected forms, rate-limited sign-up and
// log-in, pages in English and Hungarian, a stylesheet under static/.
//
//   cove -p 8080 -d todo.db examples/todo/app.js
//   then open http://localhost:8080/
//
// Environment (declared in the manifest below):
//   CSRF_SECRET    key for CSRF tokens; unset, the app makes one per database
//   COOKIE_SECURE  "false" sends cookies without `Secure`, for plain http on
//                  a host other than localhost (browsers drop Secure cookies
//                  there); anything else, or unset, keeps them Secure
import { app } from "hull:app";
import { db } from "hull:db";
import { env } from "hull:env";
import { time } from "hull:time";
import { crypto } from "hull:crypto";
import { template } from "hull:template";
import { form } from "hull:form";
import { validate } from "hull:validate";
import { cookie } from "hull:cookie";
import { i18n } from "hull:i18n";
import { session } from "hull:middleware:session";
import { auth } from "hull:middleware:auth";
import { csrf } from "hull:middleware:csrf";
import { ratelimit } from "hull:middleware:ratelimit";
import { logger } from "hull:middleware:logger";
import { transaction } from "hull:middleware:transaction";
import en from "./locales/en.json";
import hu from "./locales/hu.json";

app.manifest({ env: ["CSRF_SECRET", "COOKIE_SECURE"] });

// Settings ------------------------------------------------------------------

const cookieOpts = { secure: env.get("COOKIE_SECURE") !== "false" };

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");

// Every worker loads this file, and a token made by one worker must verify
// on the others (and after a restart), so the secret comes from the
// environment or from one row of the database, never from a random value
// drawn at load (Hull's app did that). ON CONFLICT DO NOTHING keeps the value of
// the first worker that got there.
function csrfSecret() {
  const configured = env.get("CSRF_SECRET");
  if (configured) {
    // HMAC keys are 1-128 bytes; say so now rather than fail every request.
    const bytes = encodeURIComponent(configured).replace(/%[0-9A-F]{2}/g, "_").length;
    if (bytes > 128) throw new Error(`CSRF_SECRET is ${bytes} bytes long; use at most 128 (e.g. 64 hex digits)`);
    return configured;
  }
  db.exec("INSERT INTO app_secrets (name, value) VALUES ('csrf', ?) ON CONFLICT (name) DO NOTHING", [
    hex(crypto.random(32)),
  ]);
  return db.query("SELECT value FROM app_secrets WHERE name = 'csrf'")[0].value;
}
const secret = csrfSecret();

// Logged in for a week after the last visit.
session.init({ ttl: 7 * 86400 });

// Languages -----------------------------------------------------------------

const locales = { en, hu };
for (const [name, strings] of Object.entries(locales)) i18n.load(name, strings);

// The `hull.lang` cookie (set by /lang/:code), else Accept-Language, else English.
function langOf(req) {
  const chosen = cookie.parse(req.headers.cookie ?? "")["hull.lang"];
  if (Object.hasOwn(locales, chosen)) return chosen;
  return i18n.detect(req) ?? "en";
}

// i18n has one active locale per worker, and while one request awaits a
// password hash the worker serves others. So the locale is set right before
// each lookup: nothing else can run between the two calls.
function translate(lang, key, params) {
  i18n.locale(lang);
  return i18n.t(key, params);
}

// Helpers -------------------------------------------------------------------

const userId = (req) => req.ctx.session?.user_id;

function render(req, res, page, data) {
  const lang = langOf(req);
  const t = {};
  for (const key of Object.keys(en)) t[key] = translate(lang, key);
  const loggedIn = userId(req) !== undefined;
  res.html(
    template.render(`pages/${page}.html`, {
      ...data,
      page,
      lang,
      t,
      year: time.date().slice(0, 4),
      logged_in: loggedIn,
      user: loggedIn ? req.ctx.session : null,
      csrf_token: req.ctx.csrf_token,
    }),
  );
}

// Give the page's forms a CSRF token. A token belongs to a session, so a
// visitor who is not logged in gets an empty session first. POST /login
// and /register insist on that session: a form posted from another site
// arrives without the cookie (SameSite=Lax), so no other site can log a
// visitor in to an account of its choosing.
function formToken(req, res) {
  req.ctx.sessionId ??= auth.login(req, res, {}, { cookieOpts });
  req.ctx.csrf_token ??= csrf.generate(req.ctx.sessionId, secret);
}

// A login or sign-up form again, with `errors` (a list of messages).
function formAgain(req, res, page, errors, values) {
  formToken(req, res);
  render(req, res, page, { ...values, errors });
}

// The messages of a failed validate.check, in the form's field order.
const messages = (errors, fields) => fields.filter((f) => errors[f]).map((f) => errors[f]);

// Where /lang/:code goes back to: the Referer when it is a page of this
// site, else "/". Never "//host/…", which would leave the site.
function backTo(req) {
  let ref = req.headers.referer ?? "/";
  const absolute = /^https?:\/\/([^/?#]+)(.*)$/.exec(ref);
  if (absolute) {
    if (absolute[1] !== req.headers.host) return "/";
    ref = absolute[2];
  }
  return ref === "/" || /^\/[^/\\]/.test(ref) ? ref : "/";
}

// At most n characters (code points, as in Lua: never half a letter).
const clip = (text, n) => Array.from(text).slice(0, n).join("");

function signIn(req, res, user) {
  auth.login(req, res, { user_id: user.id, name: user.name, email: user.email }, { cookieOpts });
}

// Middleware ----------------------------------------------------------------

app.use("*", "/*", logger.middleware({ skip: ["/health"] }));
app.use("*", "/*", auth.sessionMiddleware({ optional: true, cookieOpts }));
app.use("POST", "/login", ratelimit.middleware({ limit: 10, window: 60 }));
app.use("POST", "/register", ratelimit.middleware({ limit: 5, window: 60 }));
// A page left open for a day can still post its forms.
app.usePost("*", "/*", csrf.middleware({ secret, maxAge: 86400 }));

// Pages anyone can see ------------------------------------------------------

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.get("/lang/:code", (req, res) => {
  const code = req.params.code;
  if (Object.hasOwn(locales, code)) {
    res.header("Set-Cookie", cookie.serialize("hull.lang", code, { secure: cookieOpts.secure, maxAge: 365 * 86400 }));
  }
  res.redirect(backTo(req));
});

app.get("/about", (req, res) => {
  const note = translate(langOf(req), "about_runtime", { runtime: "JavaScript" });
  render(req, res, "about", { runtime_note: note });
});

// Accounts ------------------------------------------------------------------

app.get("/login", (req, res) => {
  if (userId(req)) return res.redirect("/");
  formToken(req, res);
  render(req, res, "login", {});
});

app.get("/register", (req, res) => {
  if (userId(req)) return res.redirect("/");
  formToken(req, res);
  render(req, res, "register", {});
});

app.post("/login", async (req, res) => {
  const lang = langOf(req);
  const input = form.parse(req.body);
  if (!req.ctx.sessionId) {
    return formAgain(req, res, "login", [translate(lang, "error_expired")], { email: input.email });
  }
  const [ok, errors] = validate.check(input, {
    email: { required: true, trim: true, email: true, message: translate(lang, "error_email") },
    password: { required: true, message: translate(lang, "error_credentials") },
  });
  if (!ok) {
    return formAgain(req, res, "login", messages(errors, ["email", "password"]), { email: input.email });
  }
  const email = input.email.toLowerCase();
  const user = db.query("SELECT id, name, email, password_hash FROM users WHERE email = ?", [email])[0];
  // The async form lets the worker serve other requests while PBKDF2 runs.
  if (!user || !(await crypto.verifyPasswordAsync(input.password, user.password_hash))) {
    return formAgain(req, res, "login", [translate(lang, "error_credentials")], { email });
  }
  signIn(req, res, user);
  res.redirect("/");
});

app.post("/register", async (req, res) => {
  const lang = langOf(req);
  const input = form.parse(req.body);
  const again = { name: input.name, email: input.email };
  if (!req.ctx.sessionId) {
    return formAgain(req, res, "register", [translate(lang, "error_expired")], again);
  }
  const [ok, errors] = validate.check(input, {
    name: { required: true, trim: true, max: 100, message: translate(lang, "error_name") },
    email: { required: true, trim: true, email: true, max: 254, message: translate(lang, "error_email") },
    password: { required: true, min: 8, message: translate(lang, "error_password") },
  });
  if (!ok) {
    return formAgain(req, res, "register", messages(errors, ["name", "email", "password"]), again);
  }
  const email = input.email.toLowerCase();
  const hash = await crypto.hashPasswordAsync(input.password);
  // The check and the insert in one transaction: two sign-ups with one
  // address cannot both pass the check.
  const user = transaction.run(() => {
    if (db.query("SELECT id FROM users WHERE email = ?", [email]).length > 0) return null;
    db.exec("INSERT INTO users (email, password_hash, name, created_at) VALUES (?, ?, ?, ?)", [
      email,
      hash,
      input.name,
      time.now(),
    ]);
    return { id: db.lastId(), name: input.name, email };
  });
  if (!user) {
    return formAgain(req, res, "register", [translate(lang, "error_taken")], again);
  }
  signIn(req, res, user);
  res.redirect("/");
});

app.post("/logout", (req, res) => {
  auth.logout(req, res, { cookieOpts });
  res.redirect("/login");
});

// Todos (logged in only; anyone else goes to /login) ------------------------

app.get("/", (req, res) => {
  const uid = userId(req);
  if (!uid) return res.redirect("/login");
  const todos = db.query(
    "SELECT id, title, done, created_at FROM todos WHERE user_id = ? ORDER BY created_at DESC, id DESC",
    [uid],
  );
  const total = todos.length;
  const doneCount = todos.filter((todo) => todo.done === 1).length;
  const remaining = total - doneCount;
  const lang = langOf(req);
  const summary =
    remaining === 0 ? translate(lang, "all_done", { total }) : translate(lang, "summary", { remaining, total });
  render(req, res, "index", {
    todos,
    has_todos: total > 0,
    total,
    done_count: doneCount,
    remaining,
    summary,
  });
});

app.post("/add", (req, res) => {
  const uid = userId(req);
  if (!uid) return res.redirect("/login");
  const title = (form.parse(req.body).title ?? "").trim();
  if (title !== "") {
    db.exec("INSERT INTO todos (user_id, title, created_at) VALUES (?, ?, ?)", [uid, clip(title, 500), time.now()]);
  }
  res.redirect("/");
});

app.post("/toggle/:id", (req, res) => {
  const uid = userId(req);
  if (!uid) return res.redirect("/login");
  db.exec("UPDATE todos SET done = 1 - done WHERE id = ? AND user_id = ?", [req.params.id, uid]);
  res.redirect("/");
});

app.post("/delete/:id", (req, res) => {
  const uid = userId(req);
  if (!uid) return res.redirect("/login");
  db.exec("DELETE FROM todos WHERE id = ? AND user_id = ?", [req.params.id, uid]);
  res.redirect("/");
});
