// {{name}}: a Cove app. `cove dev` serves it and reloads on every change;
// `cove test` runs tests/test_app.js.
//
// An ES module: Cove's APIs are imported from "hull:*" modules.
// The notes table comes from migrations/001_init.sql.

import { app } from "hull:app";
import { db } from "hull:db";
import { json } from "hull:json";
import { log } from "hull:log";
import { time } from "hull:time";

// The request body as a JSON object, or null if it is missing or not one.
function jsonBody(req) {
  try {
    const data = json.decode(req.body ?? "");
    return data !== null && typeof data === "object" && !Array.isArray(data) ? data : null;
  } catch {
    return null;
  }
}

const notFound = (res) => res.json({ error: "note not found" }, 404);

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.get("/notes", (req, res) => {
  res.json(db.query("SELECT id, text, created_at FROM notes ORDER BY id"));
});

app.get("/notes/:id", (req, res) => {
  const [note] = db.query("SELECT id, text, created_at FROM notes WHERE id = ?", [req.params.id]);
  if (!note) return notFound(res);
  res.json(note);
});

app.post("/notes", (req, res) => {
  const body = jsonBody(req);
  if (!body || typeof body.text !== "string" || body.text === "") {
    return res.json({ error: 'send a JSON object with a non-empty "text"' }, 400);
  }
  db.exec("INSERT INTO notes (text, created_at) VALUES (?, ?)", [body.text, time.now()]);
  const id = db.lastId();
  log.info(`created note ${id}`);
  res.json({ id, text: body.text }, 201);
});

app.del("/notes/:id", (req, res) => {
  if (db.exec("DELETE FROM notes WHERE id = ?", [req.params.id]) === 0) return notFound(res);
  res.json({ ok: true });
});
