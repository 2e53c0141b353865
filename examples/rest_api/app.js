// rest_api: task CRUD over JSON, with input checked by hull:validate and
// error messages in English or Hungarian by hull:i18n. The JavaScript twin
// of app.lua.
//
//   cove -p 8080 -d tasks.db examples/rest_api/app.js
//   curl -X POST localhost:8080/tasks -d '{"title":"write docs"}'
//   curl -H 'Accept-Language: hu' localhost:8080/tasks/99

import { app } from "hull:app";
import { db } from "hull:db";
import { json } from "hull:json";
import { time } from "hull:time";
import { validate } from "hull:validate";
import { i18n } from "hull:i18n";

i18n.load("en", { errors: { not_found: "task not found", invalid_json: "invalid JSON" } });
i18n.load("hu", { errors: { not_found: "a feladat nem található", invalid_json: "érvénytelen JSON" } });

// A new task needs a title; an update may leave it out (it is kept).
const NEW_TASK = { title: { required: true, type: "string", trim: true, max: 200 } };
const UPDATE = {
  title: {
    type: "string", trim: true, max: 200,
    fn: (title) => (title === "" ? "must not be empty" : undefined),
  },
};

// Error replies in the request's language. The active locale belongs to the
// worker, so it is set right before the message is looked up.
function fail(req, res, key, status) {
  i18n.locale(i18n.detect(req) ?? "en");
  res.json({ error: i18n.t(`errors.${key}`) }, status);
}

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

app.get("/tasks", (req, res) => {
  res.json(db.query("SELECT * FROM tasks ORDER BY created_at DESC, id DESC"));
});

app.get("/tasks/:id", (req, res) => {
  const [task] = db.query("SELECT * FROM tasks WHERE id = ?", [req.params.id]);
  if (!task) return fail(req, res, "not_found", 404);
  res.json(task);
});

app.post("/tasks", (req, res) => {
  const body = jsonBody(req);
  if (!body) return fail(req, res, "invalid_json", 400);
  const [ok, errors] = validate.check(body, NEW_TASK);
  if (!ok) return res.json({ errors }, 400);
  db.exec("INSERT INTO tasks (title, created_at) VALUES (?, ?)", [body.title, time.now()]);
  res.json({ id: db.lastId(), title: body.title, done: 0 }, 201);
});

// A missing title keeps the old one (COALESCE; Hull's JS bound the missing
// title as NULL and failed with a 500); `done` is set from the body every
// time, truthy as in Lua (app.lua's `body.done and 1 or 0`): only a missing,
// null or false `done` clears it, so `"done": 0` sets it.
app.put("/tasks/:id", (req, res) => {
  const body = jsonBody(req);
  if (!body) return fail(req, res, "invalid_json", 400);
  const [ok, errors] = validate.check(body, UPDATE);
  if (!ok) return res.json({ errors }, 400);
  const done = (body.done ?? false) !== false ? 1 : 0;
  const changed = db.exec(
    "UPDATE tasks SET title = COALESCE(?, title), done = ? WHERE id = ?",
    [body.title, done, req.params.id],
  );
  if (changed === 0) return fail(req, res, "not_found", 404);
  res.json({ ok: true });
});

app.del("/tasks/:id", (req, res) => {
  if (db.exec("DELETE FROM tasks WHERE id = ?", [req.params.id]) === 0) {
    return fail(req, res, "not_found", 404);
  }
  res.json({ ok: true });
});
