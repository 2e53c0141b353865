// cove test examples/crud_with_auth — the cases run in order against one
// database. Handlers run alone by default (as in Hull), so without
// `middleware: true` every /tasks route answers 401; with it, the session
// cookie from /login identifies the user.

const call = (method, path, jar, body) =>
  test[method](path, {
    headers: jar,
    middleware: jar !== undefined,
    body: body === undefined ? undefined : JSON.stringify(body),
  });

// Register and log in; returns the cookie to send.
function signUp(email, name) {
  const account = { email, password: `password ${name}`, name };
  test.eq(call("post", "/register", undefined, account).status, 201);
  const r = call("post", "/login", undefined, account);
  test.eq(r.status, 200);
  return { Cookie: r.headers["set-cookie"].split(";")[0] };
}

let alice;
let bob;

test("GET /health", () => {
  test.eq(test.get("/health").json, { status: "ok" });
});

test("every /tasks route needs a session", () => {
  test.eq(test.get("/tasks").status, 401);
  test.eq(test.get("/tasks/1").json, { error: "authentication required" });
  test.eq(call("post", "/tasks", undefined, { title: "x" }).status, 401);
  test.eq(call("put", "/tasks/1", undefined, { done: true }).status, 401);
  test.eq(test.delete("/tasks/1").status, 401);
});

test("Alice and Bob sign up", () => {
  alice = signUp("alice@example.com", "Alice");
  bob = signUp("bob@example.com", "Bob");
  test.eq(call("get", "/me", alice).json.name, "Alice");
});

test("Alice creates and lists her task", () => {
  const r = call("post", "/tasks", alice, { title: "Buy milk" });
  test.eq(r.status, 201);
  test.eq(r.json, { id: 1, title: "Buy milk", done: 0 });
  const list = call("get", "/tasks", alice).json;
  test.eq(list.length, 1);
  test.eq(list[0].title, "Buy milk");
  test.eq(call("get", "/tasks/1", alice).json.title, "Buy milk");
});

test("Bob sees none of Alice's tasks", () => {
  test.eq(call("get", "/tasks", bob).json, []);
  test.eq(call("get", "/tasks/1", bob).json, { error: "task not found" });
  test.eq(call("put", "/tasks/1", bob, { title: "mine now" }).status, 404);
  test.eq(call("delete", "/tasks/1", bob).status, 404);
  test.eq(call("get", "/tasks/1", alice).json.title, "Buy milk");
});

test("POST /tasks validates its input", () => {
  test.eq(test.post("/tasks", { headers: alice, middleware: true, body: "{" }).json, { error: "invalid JSON" });
  test.eq(call("post", "/tasks", alice, {}).json, { errors: { title: "is required" } });
});

test("PUT /tasks/:id updates done and keeps a missing title", () => {
  test.eq(call("put", "/tasks/1", alice, { done: true }).json, { ok: true });
  const task = call("get", "/tasks/1", alice).json;
  test.eq(task.done, 1);
  test.eq(task.title, "Buy milk");
  test.eq(call("put", "/tasks/1", alice, { title: "" }).status, 400);
});

test("DELETE /tasks/:id removes the task", () => {
  test.eq(call("delete", "/tasks/1", alice).json, { ok: true });
  test.eq(call("delete", "/tasks/1", alice).status, 404);
  test.eq(call("get", "/tasks", alice).json, []);
});
