// cove test examples/templates

test("home page extends the layout and includes the nav", () => {
  const r = test.get("/");
  test.eq(r.status, 200);
  test.eq(r.headers["content-type"], "text/html; charset=utf-8");
  test.ok(r.body.includes("<title>Home · Cove templates</title>"), "title block");
  test.ok(r.body.includes('<a href="/" aria-current="page">Home</a>'), "nav marks the page");
  test.ok(r.body.includes('<link rel="stylesheet" href="/static/style.css">'), "stylesheet");
});

test("loops, filters and conditions", () => {
  const body = test.get("/").body;
  test.ok(body.includes("<p>3 users, 3 features.</p>"), "length");
  test.ok(body.includes('<li class="first">1. ALICE &lt;alice@example.com&gt;</li>'), "loop.first, upper");
  test.ok(body.includes("<li>2. BOB &lt;bob@example.com&gt;</li>"), "trim");
  test.ok(body.includes("<li>3. CHARLIE (no email)</li>"), "else branch");
  test.ok(body.includes("Layouts with extends ★"), "comparison");
  test.ok(body.includes("Loop variables (new)"), "elif");
  test.ok(body.includes("<h1>Welcome</h1>"), "default");
});

test("escaped and raw output", () => {
  const body = test.get("/").body;
  test.ok(body.includes("Escaped: &lt;b&gt;bold&lt;/b&gt;"), "escaped");
  test.ok(body.includes("Raw: <b>bold</b>"), "raw");
  test.ok(body.includes('const users = [{"name":"Alice","email":"alice@example.com"}'), "json filter, insertion order");
});

test("about page shows the delimiters as text", () => {
  const r = test.get("/about");
  test.eq(r.status, 200);
  test.ok(r.body.includes("Write {{ var }} to escape a value and {{{ var }}} to print it raw."), "literals");
  test.ok(r.body.includes('<a href="/about" aria-current="page">About</a>'), "nav");
});

test("GET /users", () => {
  const users = test.get("/users").json;
  test.eq(users.length, 3);
  test.eq(users[2], { name: "Charlie" });
});
