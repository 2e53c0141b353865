// cove test examples/rest_api — the cases run in order against one database.
import { db } from "hull:db";

const create = (title) => test.post("/tasks", { body: JSON.stringify({ title }) });

test("starts empty", () => {
  test.eq(test.get("/tasks").json, []);
});

test("POST /tasks creates a task", () => {
  const r = create("write docs");
  test.eq(r.status, 201);
  test.eq(r.json, { id: 1, title: "write docs", done: 0 });
});

test("POST /tasks validates its input", () => {
  test.eq(test.post("/tasks", { body: "not json" }).status, 400);
  const r = create("");
  test.eq(r.status, 400);
  test.eq(r.json.errors.title, "is required");
});

test("POST /tasks explains each invalid title (hull:validate)", () => {
  test.eq(test.post("/tasks", { body: '{"title": 7}' }).json.errors.title, "must be a string");
  test.eq(create("x".repeat(201)).json.errors.title, "must be at most 200 characters");
  test.eq(create("   ").json.errors.title, "is required");
  test.eq(create("  trimmed  ").json.title, "trimmed");
  test.eq(test.delete("/tasks/2").status, 200);
});

test("errors follow Accept-Language (hull:i18n)", () => {
  const headers = { "Accept-Language": "hu-HU,hu;q=0.9" };
  test.eq(test.get("/tasks/99", { headers }).json.error, "a feladat nem található");
  test.eq(test.post("/tasks", { body: "{", headers }).json.error, "érvénytelen JSON");
  test.eq(test.get("/tasks/99").json.error, "task not found");
});

test("GET /tasks/:id reads one task", () => {
  test.eq(test.get("/tasks/1").json.title, "write docs");
  test.eq(test.get("/tasks/99").status, 404);
});

test("PUT /tasks/:id updates", () => {
  test.eq(test.put("/tasks/1", { body: '{"done": true}' }).json, { ok: true });
  const task = test.get("/tasks/1").json;
  test.eq(task.done, 1);
  test.eq(task.title, "write docs");
});

test("PUT /tasks/:id keeps a missing title and refuses an empty one", () => {
  test.eq(test.put("/tasks/1", { body: '{"title": "  renamed "}' }).json, { ok: true });
  test.eq(test.get("/tasks/1").json.title, "renamed");
  const r = test.put("/tasks/1", { body: '{"title": ""}' });
  test.eq(r.status, 400);
  test.eq(r.json.errors.title, "must not be empty");
  test.eq(test.put("/tasks/99", { body: "{}" }).status, 404);
});

test("DELETE /tasks/:id removes", () => {
  test.eq(test.delete("/tasks/1").status, 200);
  test.eq(test.delete("/tasks/1").status, 404);
  test.eq(db.query("SELECT * FROM tasks").length, 0);
});
