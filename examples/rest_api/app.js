// rest_api: task CRUD over JSON, with input validation. The JavaScript twin
// of app.lua.
//
//   cove -p 8080 -d tasks.db examples/rest_api/app.js
//   curl -X POST localhost:8080/tasks -d '{"title":"write docs"}'

import { app } from "hull:app";
import { db } from "hull:db";
import { json } from "hull:json";
import { time } from "hull:time";

// The decoded JSON body of the request, or null if the body is missing or
// does not decode to an object. Arrays pass, as Lua tables do in app.lua.
function jsonBody(req) {
  try {
    const data = json.decode(req.body ?? "");
    return typeof data === "object" ? data : null;
  } catch {
    return null;
  }
}

const notFound = (res) => res.json({ error: "task not found" }, 404);

app.get("/tasks", (req, res) => {
  res.json(db.query("SELECT * FROM tasks ORDER BY created_at DESC, id DESC"));
});

app.get("/tasks/:id", (req, res) => {
  const [task] = db.query("SELECT * FROM tasks WHERE id = ?", [req.params.id]);
  if (!task) return notFound(res);
  res.json(task);
});

app.post("/tasks", (req, res) => {
  const body = jsonBody(req);
  if (!body) return res.json({ error: "invalid JSON" }, 400);
  const { title } = body;
  if (typeof title !== "string" || title === "") {
    return res.json({ errors: { title: "is required" } }, 400);
  }
  db.exec("INSERT INTO tasks (title, created_at) VALUES (?, ?)", [title, time.now()]);
  res.json({ id: db.lastId(), title, done: 0 }, 201);
});

// A missing title keeps the old one; `done` is set from the body every time,
// truthy as in Lua (app.lua's `body.done and 1 or 0`): only a missing, null
// or false `done` clears it, so `"done": 0` sets it.
app.put("/tasks/:id", (req, res) => {
  const body = jsonBody(req);
  if (!body) return res.json({ error: "invalid JSON" }, 400);
  const done = (body.done ?? false) !== false ? 1 : 0;
  const changed = db.exec(
    "UPDATE tasks SET title = COALESCE(?, title), done = ? WHERE id = ?",
    [body.title, done, req.params.id],
  );
  if (changed === 0) return notFound(res);
  res.json({ ok: true });
});

app.del("/tasks/:id", (req, res) => {
  if (db.exec("DELETE FROM tasks WHERE id = ?", [req.params.id]) === 0) return notFound(res);
  res.json({ ok: true });
});
