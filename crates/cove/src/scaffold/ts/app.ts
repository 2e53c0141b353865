// {{name}}: a Cove app. `cove dev` serves it and reloads on every change;
// `cove test` runs tests/test_app.ts.
//
// TypeScript: Cove runs this file with its types stripped and does not
// check them; `npx -p typescript tsc -p .` does (see tsconfig.json). Only
// erasable syntax runs: no enum, no namespace with values, no parameter
// properties; import types with `import type`.
//
// An ES module: Cove's APIs are imported from "hull:*" modules.
// The notes table comes from migrations/001_init.sql.

import { app } from "hull:app";
import { db } from "hull:db";
import { json } from "hull:json";
import { log } from "hull:log";
import { time } from "hull:time";

/** A row of the notes table. */
type Note = {
  id: number;
  text: string;
  created_at: number;
};

// The text of the note a request body asks for, or null if it asks for none.
function noteText(body: string | null | undefined): string | null {
  let data: unknown;
  try {
    data = json.decode(body ?? "");
  } catch {
    return null;
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return null;
  const text = (data as Record<string, unknown>).text;
  return typeof text === "string" && text !== "" ? text : null;
}

const notFound = { error: "note not found" };

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.get("/notes", (req, res) => {
  const notes = db.query("SELECT id, text, created_at FROM notes ORDER BY id") as Note[];
  res.json(notes);
});

app.get("/notes/:id", (req, res) => {
  const [note] = db.query("SELECT id, text, created_at FROM notes WHERE id = ?", [
    req.params.id,
  ]) as Note[];
  if (!note) return res.json(notFound, 404);
  res.json(note);
});

app.post("/notes", (req, res) => {
  const text = noteText(req.body);
  if (text === null) {
    return res.json({ error: 'send a JSON object with a non-empty "text"' }, 400);
  }
  db.exec("INSERT INTO notes (text, created_at) VALUES (?, ?)", [text, time.now()]);
  const id = db.lastId();
  log.info(`created note ${id}`);
  res.json({ id, text }, 201);
});

app.del("/notes/:id", (req, res) => {
  if (db.exec("DELETE FROM notes WHERE id = ?", [req.params.id]) === 0) {
    return res.json(notFound, 404);
  }
  res.json({ ok: true });
});
