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

test("DELETE /tasks/:id removes", () => {
  test.eq(test.delete("/tasks/1").status, 200);
  test.eq(test.delete("/tasks/1").status, 404);
  test.eq(db.query("SELECT * FROM tasks").length, 0);
});
