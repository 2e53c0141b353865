// chat: rooms over WebSocket, a live "online" counter over Server-Sent
// Events, sign-in by name with a session cookie.
//
//   cove -p 8080 -d chat.db examples/chat/app.js
//   then open http://localhost:8080/ in two browsers (or a private window)
//
// How it fits together:
//   * POST /login keeps a name in a session (hull:middleware:session, rows
//     in the database), so every worker knows who the cookie belongs to.
//   * /ws/rooms/:room is a WebSocket endpoint. Middleware runs before the
//     upgrade: no session, a page of another site, or a bad room name, and
//     the upgrade is refused (401, 403, 400).
//   * A connection subscribes to "room:<name>"; what one member says is
//     stored (the last 50 messages of each room are kept) and published to
//     that topic, which reaches the room's members on every worker.
//   * GET /events/online is an event stream: the number of people with a
//     room open, sent first and then whenever it changes.
//   * static/chat.js is the page's script: the default Content-Security-
//     Policy allows none, so the manifest allows this site's scripts and
//     connections (WebSocket and EventSource).
//
// Anybody can sign in under any name: there are no passwords. The online
// count lives in the kv store (one process's memory, or Redis with
// --kv redis://), so it starts from zero with the server.
//
// Environment (declared in the manifest below):
//   CSRF_SECRET    key for CSRF tokens; unset, the app makes one per database
//   COOKIE_SECURE  "false" sends cookies without `Secure`, for plain http on
//                  a host other than localhost; anything else keeps them Secure
import { app } from "hull:app";
import { db } from "hull:db";
import { env } from "hull:env";
import { time } from "hull:time";
import { crypto } from "hull:crypto";
import { kv } from "hull:kv";
import { template } from "hull:template";
import { form } from "hull:form";
import { session } from "hull:middleware:session";
import { auth } from "hull:middleware:auth";
import { csrf } from "hull:middleware:csrf";
import { logger } from "hull:middleware:logger";

app.manifest({
  env: ["CSRF_SECRET", "COOKIE_SECURE"],
  csp:
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; " +
    "img-src 'self'; form-action 'self'; frame-ancestors 'none'",
});

// Settings ------------------------------------------------------------------

const KEEP = 50; // messages kept (and sent on joining) per room
const MAX_MESSAGE = 500; // characters
const MAX_NAME = 32; // characters, for user and room names

const cookieOpts = { secure: env.get("COOKIE_SECURE") !== "false" };

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");

// One secret for every worker (and restart): from the environment, else
// one row of the database, which the first worker to load writes.
function csrfSecret() {
  const configured = env.get("CSRF_SECRET");
  if (configured) return configured;
  db.exec("INSERT INTO app_secrets (name, value) VALUES ('csrf', ?) ON CONFLICT (name) DO NOTHING", [
    hex(crypto.random(32)),
  ]);
  return db.query("SELECT value FROM app_secrets WHERE name = 'csrf'")[0].value;
}
const secret = csrfSecret();

session.init({ ttl: 7 * 86400 });

// Checks --------------------------------------------------------------------

// Without the spaces, tabs and line breaks at either end (as Lua's %s).
const trim = (text) => text.replace(/^[\t\n\v\f\r ]+|[\t\n\v\f\r ]+$/g, "");

// Characters (code points, as Lua's utf8.len), not UTF-16 units.
const length = (text) => Array.from(text).length;

// The problem with a user name, or null.
function nameProblem(name) {
  if (name === "") return "Please enter a name.";
  if (length(name) > MAX_NAME) return `A name is at most ${MAX_NAME} characters.`;
  if (/[\x00-\x1f\x7f]/.test(name)) return "A name cannot contain control characters.";
  return null;
}

const ROOM_RULE = `Room names are 1 to ${MAX_NAME} lowercase letters, digits and dashes, starting with a letter or digit.`;

const validRoom = (room) => room.length <= MAX_NAME && /^[a-z0-9][a-z0-9-]*$/.test(room);

// [the message to store and send, null] or [null, what is wrong with it].
function checkMessage(data, isBinary) {
  if (isBinary) return [null, "Messages are text, not binary."];
  const text = trim(data);
  const n = length(text);
  if (text === "") return [null, "A message cannot be empty."];
  if (n > MAX_MESSAGE) return [null, `A message is at most ${MAX_MESSAGE} characters (this one has ${n}).`];
  return [text, null];
}

// Helpers -------------------------------------------------------------------

// The signed-in user's name, or undefined (a visitor's session holds no name).
const userOf = (req) => req.ctx.session?.name;

function render(req, res, page, data) {
  res.html(
    template.render(`pages/${page}.html`, {
      ...data,
      page,
      user: userOf(req) ?? null,
      csrf_token: req.ctx.csrf_token,
    }),
  );
}

// A token for the sign-in form. A token belongs to a session, so a visitor
// gets an empty session first; POST /login insists on it, so a form posted
// from another site (which arrives without the SameSite=Lax cookie) signs
// nobody in.
function formToken(req, res) {
  req.ctx.sessionId ??= auth.login(req, res, {}, { cookieOpts });
  req.ctx.csrf_token ??= csrf.generate(req.ctx.sessionId, secret);
}

// The rooms with messages, busiest first, and the lobby (always there).
function rooms() {
  const list = db.query(
    "SELECT room, COUNT(*) AS messages FROM messages GROUP BY room ORDER BY COUNT(*) DESC, room LIMIT 50",
  );
  if (!list.some((r) => r.room === "lobby")) list.unshift({ room: "lobby", messages: 0 });
  return list;
}

function index(req, res, status, errors) {
  res.status(status);
  render(req, res, "index", { rooms: rooms(), errors });
}

// A room's kept messages, oldest first.
function history(room) {
  const rows = db.query("SELECT name, text, at FROM messages WHERE room = ? ORDER BY id DESC LIMIT ?", [room, KEEP]);
  return rows.reverse().map((row) => ({ user: row.name, text: row.text, at: row.at }));
}

// Who is online: kv counts each user's open rooms, and "chat:online" the
// users with at least one. Only a change is published.
function arrived(user) {
  if (kv.incr(`chat:user:${user}`) === 1) app.publish("online", { online: kv.incr("chat:online") });
}

function departed(user) {
  if (kv.incr(`chat:user:${user}`, -1) === 0) app.publish("online", { online: kv.incr("chat:online", -1) });
}

// Middleware ----------------------------------------------------------------

app.use("*", "/*", logger.middleware({ skip: ["/health"] }));
app.use("*", "/*", auth.sessionMiddleware({ optional: true, cookieOpts }));

// Before a WebSocket upgrade: only signed-in users, only from this site's
// pages (a browser sends the cookie with a WebSocket opened by any site,
// and says which one in Origin), only rooms with valid names.
app.use("GET", "/ws/*", (req, res) => {
  if (!userOf(req)) {
    res.json({ error: "Sign in first." }, 401);
    return true;
  }
  const origin = req.headers.origin;
  if (origin !== undefined && /^https?:\/\/([^/]+)$/.exec(origin)?.[1] !== req.headers.host) {
    res.json({ error: "This page may not open a chat connection." }, 403);
    return true;
  }
  const room = /^\/ws\/rooms\/([^/]+)$/.exec(req.path)?.[1];
  if (room !== undefined && !validRoom(room)) {
    res.json({ error: ROOM_RULE }, 400);
    return true;
  }
});

// Form posts need the session's token.
app.usePost("*", "/*", csrf.middleware({ secret, maxAge: 86400 }));

// Pages ---------------------------------------------------------------------

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.get("/login", (req, res) => {
  if (userOf(req)) return res.redirect("/");
  formToken(req, res);
  render(req, res, "login", {});
});

app.post("/login", (req, res) => {
  const name = trim(form.parse(req.body).name ?? "");
  let problem = nameProblem(name);
  if (!req.ctx.sessionId) problem = "This form had expired. Please send it again.";
  if (problem) {
    formToken(req, res);
    res.status(400);
    return render(req, res, "login", { errors: [problem], name });
  }
  auth.login(req, res, { name }, { cookieOpts });
  res.redirect("/");
});

app.post("/logout", (req, res) => {
  auth.logout(req, res, { cookieOpts });
  res.redirect("/login");
});

app.get("/", (req, res) => {
  if (!userOf(req)) return res.redirect("/login");
  index(req, res, 200);
});

// The form on / asks for a room by name.
app.get("/join", (req, res) => {
  if (!userOf(req)) return res.redirect("/login");
  const room = trim(req.query.room ?? "").toLowerCase();
  if (!validRoom(room)) return index(req, res, 400, [ROOM_RULE]);
  res.redirect(`/rooms/${room}`);
});

app.get("/rooms/:room", (req, res) => {
  if (!userOf(req)) return res.redirect("/login");
  const room = req.params.room;
  if (!validRoom(room)) return index(req, res, 404, [ROOM_RULE]);
  render(req, res, "room", { room, max_message: MAX_MESSAGE });
});

// Live updates --------------------------------------------------------------

// The online count now, then each change.
app.get("/events/online", (req, res) => {
  res.subscribe("online").event({ online: kv.get("chat:online") ?? 0 }, "online");
});

app.ws("/ws/rooms/:room", {
  open(ws, req) {
    const room = req.params.room;
    const user = ws.ctx.session.name;
    Object.assign(ws.ctx, { room, user });
    ws.subscribe(`room:${room}`);
    ws.send({ type: "history", room, messages: history(room) });
    arrived(user);
    ws.ctx.counted = true;
    app.publish(`room:${room}`, { type: "join", user, at: time.now() });
  },

  message(ws, data, isBinary) {
    const [text, problem] = checkMessage(data, isBinary);
    if (problem) return ws.send({ type: "error", error: problem });
    const { room, user } = ws.ctx;
    const at = time.now();
    db.batch(() => {
      db.exec("INSERT INTO messages (room, name, text, at) VALUES (?, ?, ?, ?)", [room, user, text, at]);
      db.exec(
        "DELETE FROM messages WHERE room = ? AND id NOT IN " +
          "(SELECT id FROM messages WHERE room = ? ORDER BY id DESC LIMIT ?)",
        [room, room, KEEP],
      );
    });
    // Sent once the rows are committed, to every member (the sender too).
    app.publish(`room:${room}`, { type: "message", user, text, at });
  },

  close(ws, code, reason) {
    if (!ws.ctx.counted) return; // open failed before it counted this connection
    departed(ws.ctx.user);
    app.publish(`room:${ws.ctx.room}`, { type: "leave", user: ws.ctx.user, at: time.now() });
  },
});
