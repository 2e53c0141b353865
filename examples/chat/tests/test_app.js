// cove test examples/chat
//
// test.get/post call the route handler alone (no middleware, so no
// session) unless { middleware: true }; the sign-in cases run the whole
// pipeline with a cookie jar, as a browser would. The WebSocket itself
// needs a real connection: crates/cove/tests/examples_chat.rs opens them.
import { db } from "hull:db";

test("GET /health", () => {
  const r = test.get("/health");
  test.eq(r.status, 200);
  test.eq(r.json, { status: "ok" });
});

test("pages send visitors to /login", () => {
  for (const path of ["/", "/rooms/lobby", "/join?room=lobby"]) {
    const r = test.get(path);
    test.eq(r.status, 302, path);
    test.eq(r.headers.location, "/login", path);
  }
});

test("GET /login renders the form with a token", () => {
  const r = test.get("/login");
  test.eq(r.status, 200);
  test.eq(r.headers["content-type"], "text/html; charset=utf-8");
  test.ok(r.body.includes('<form method="post" action="/login" class="stack">'), "form");
  test.ok(r.headers["set-cookie"].startsWith("hull.sid="), "visitor session");
  test.ok(/name="_csrf" value="[0-9a-f]+\.[0-9a-f]+"/.test(r.body), "CSRF token");
  // The page may load this site's script and open connections to it.
  const csp = r.headers["content-security-policy"];
  test.ok(csp.includes("script-src 'self'") && csp.includes("connect-src 'self'"), csp);
});

test("the online count's stream starts with the count", () => {
  const r = test.get("/events/online");
  test.eq(r.status, 200);
  test.eq(r.headers["content-type"], "text/event-stream");
  test.eq(r.body, 'event: online\ndata: {"online":0}\n\n');
});

test("the WebSocket endpoint wants an upgrade, and a session first", () => {
  test.eq(test.get("/ws/rooms/lobby").status, 426);
  const r = test.get("/ws/rooms/lobby", { middleware: true });
  test.eq(r.status, 401);
  test.eq(r.json, { error: "Sign in first." });
});

// The whole pipeline with a cookie jar: sessions and CSRF tokens.
let jar = new Map();

// `fields`: an array of [name, value], sent as a form.
function request(method, path, fields) {
  const cookies = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
  const opts = { middleware: true, headers: { Cookie: cookies } };
  if (fields) {
    opts.body = fields
      .map(([name, value]) => `${name}=${encodeURIComponent(value).replaceAll("%20", "+")}`)
      .join("&");
    opts.headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  const r = test[method](path, opts);
  const set = /^([^=;]+)=([^;]*)/.exec(r.headers["set-cookie"] ?? "");
  if (set) set[2] ? jar.set(set[1], set[2]) : jar.delete(set[1]);
  return r;
}

const token = (page) => /name="_csrf" value="([^"]+)"/.exec(page.body)[1];

test("a name is checked", () => {
  const page = request("get", "/login");
  for (const [name, message] of [
    ["   ", "Please enter a name."],
    ["é".repeat(33), "A name is at most 32 characters."],
    ["tab\there", "A name cannot contain control characters."],
  ]) {
    const r = request("post", "/login", [["_csrf", token(page)], ["name", name]]);
    test.eq(r.status, 400, message);
    test.ok(r.body.includes(message), message);
  }
  // Without the visitor session (a form posted from another site).
  const r = test.post("/login", { middleware: true, body: "name=Eve" });
  test.eq(r.status, 400);
  test.ok(r.body.includes("This form had expired. Please send it again."), "expired");
});

test("sign in, rooms, a room's page, sign out", () => {
  jar = new Map();
  const page = request("get", "/login");
  let r = request("post", "/login", [["_csrf", token(page)], ["name", "  Ada <3  "]]);
  test.eq(r.status, 302);
  test.eq(r.headers.location, "/");

  db.exec("INSERT INTO messages (room, name, text, at) VALUES ('rust', 'Bob', 'hi', 1), ('rust', 'Bob', 'yo', 2)");
  const home = request("get", "/");
  test.eq(home.status, 200);
  test.ok(home.body.includes('<span class="who">Ada &lt;3</span>'), "the name, trimmed and escaped");
  test.ok(home.body.includes('<a href="/rooms/rust">#rust</a> <span class="muted">2 messages</span>'), "rust");
  test.ok(home.body.includes('<a href="/rooms/lobby">#lobby</a> <span class="muted">0 messages</span>'), "lobby");
  test.ok(home.body.includes('<script src="/static/chat.js" defer></script>'), "the page's script");
  test.eq(request("get", "/login").headers.location, "/");

  r = request("get", "/join?room=%20Rust-Fans%20");
  test.eq(r.status, 302);
  test.eq(r.headers.location, "/rooms/rust-fans");
  r = request("get", "/join?room=-nope");
  test.eq(r.status, 400);
  test.ok(r.body.includes("Room names are 1 to 32 lowercase letters"), "room rule");
  test.eq(request("get", "/rooms/Not_This").status, 404);

  const room = request("get", "/rooms/rust-fans");
  test.eq(room.status, 200);
  test.ok(
    room.body.includes('<section class="card chat" id="chat" data-room="rust-fans" data-user="Ada &lt;3">'),
    "room",
  );
  test.ok(room.body.includes('maxlength="500"'), "message limit");

  // Signing out needs the token, then ends the session.
  test.eq(request("post", "/logout", []).status, 403);
  r = request("post", "/logout", [["_csrf", token(room)]]);
  test.eq(r.status, 302);
  test.eq(r.headers.location, "/login");
  test.eq(jar.has("hull.sid"), false);
  test.eq(request("get", "/").headers.location, "/login");
});
