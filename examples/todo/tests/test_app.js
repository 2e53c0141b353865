// cove test examples/todo
//
// As in Hull, test.get/post call the route handler alone: no middleware,
// so no session — protected routes redirect to /login and forms have no
// session to post from. The last case runs the whole pipeline
// ({ middleware: true }) with a cookie jar, as a browser would.
import { db } from "hull:db";

test("GET /health", () => {
  const r = test.get("/health");
  test.eq(r.status, 200);
  test.eq(r.json, { status: "ok" });
});

test("GET / redirects to /login without a session", () => {
  const r = test.get("/");
  test.eq(r.status, 302);
  test.eq(r.headers.location, "/login");
});

test("GET /login and /register render their forms", () => {
  for (const page of ["login", "register"]) {
    const r = test.get(`/${page}`);
    test.eq(r.status, 200, page);
    test.eq(r.headers["content-type"], "text/html; charset=utf-8");
    test.ok(r.body.includes(`<form method="post" action="/${page}" class="stack">`), `${page} form`);
    test.ok(r.body.includes('<link rel="stylesheet" href="/static/style.css">'), "stylesheet");
    // Forms need a token, and a token needs a session: the page starts one.
    test.ok(r.headers["set-cookie"].startsWith("hull.sid="), "visitor session");
    test.ok(/name="_csrf" value="[0-9a-f]+\.[0-9a-f]+"/.test(r.body), "CSRF token");
  }
  test.ok(test.get("/register").body.includes("<h1>Create your account</h1>"), "heading");
});

test("GET /about in English and Hungarian", () => {
  test.ok(test.get("/about").body.includes("This copy runs on JavaScript."), "English");
  let r = test.get("/about", { headers: { "Accept-Language": "hu-HU,hu;q=0.9" } });
  test.ok(r.body.includes('<html lang="hu">'), "lang attribute");
  test.ok(r.body.includes("Ez a példány JavaScript nyelven fut."), "Hungarian");
  r = test.get("/about", { headers: { Cookie: "hull.lang=en", "Accept-Language": "hu" } });
  test.ok(r.body.includes("This copy runs on JavaScript."), "the cookie wins");
});

test("GET /lang/:code sets hull.lang and goes back", () => {
  const r = test.get("/lang/hu", { headers: { Referer: "/about" } });
  test.eq(r.status, 302);
  test.eq(r.headers.location, "/about");
  test.ok(r.headers["set-cookie"].startsWith("hull.lang=hu; Path=/"), r.headers["set-cookie"]);
  test.eq(test.get("/lang/hu", { headers: { Referer: "//evil.example/" } }).headers.location, "/");
  test.eq(test.get("/lang/xx").headers["set-cookie"], undefined);
});

test("POST /login without a session logs nobody in", () => {
  const r = test.post("/login", { body: "email=a%40example.com&password=whatever1" });
  test.eq(r.status, 200);
  test.ok(r.body.includes("This form had expired. Please send it again."), "message");
  test.ok(r.body.includes('value="a@example.com"'), "the address is kept");
});

test("todo routes redirect to /login without a session", () => {
  for (const path of ["/add", "/toggle/1", "/delete/1", "/logout"]) {
    const r = test.post(path, { body: "title=x" });
    test.eq(r.status, 302, path);
    test.eq(r.headers.location, "/login", path);
  }
});

// test.get/test.post with the jar's cookies and the whole pipeline;
// Set-Cookie goes back into the jar. `fields`: an object of form fields.
const jar = new Map();

function request(method, path, fields) {
  const cookies = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
  const opts = { middleware: true, headers: { Cookie: cookies } };
  if (fields) {
    opts.body = Object.entries(fields)
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

test("sign up, add, toggle and delete with the whole pipeline", () => {
  let page = request("get", "/register");
  const r = request("post", "/register", {
    _csrf: token(page),
    name: "Ada",
    email: "ada@example.com",
    password: "analytical",
  });
  test.eq(r.status, 302);
  test.eq(r.headers.location, "/");

  page = request("get", "/");
  test.ok(page.body.includes('<span class="who">Ada</span>'), "logged in");
  test.eq(request("post", "/add", { title: "no token" }).status, 403);
  test.eq(request("post", "/add", { _csrf: token(page), title: "Buy milk" }).status, 302);
  const id = db.query("SELECT id FROM todos WHERE title = 'Buy milk'")[0].id;
  test.eq(request("post", `/toggle/${id}`, { _csrf: token(page) }).status, 302);
  test.ok(request("get", "/").body.includes(`<li class="todo done" id="todo-${id}">`), "done");
  test.eq(request("post", `/delete/${id}`, { _csrf: token(page) }).status, 302);
  test.eq(db.query("SELECT id FROM todos").length, 0);
});
