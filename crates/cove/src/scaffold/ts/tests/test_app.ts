// `cove test` loads the app once against an in-memory database with
// migrations/ applied, then runs these cases in order: they share that
// database. `test` is a global; test.get/post/put/patch/delete call the route
// handler in-process and return { status, body, json, headers }.
import { db } from "hull:db";

type Note = { id: number; text: string };

test("GET /health is ok", () => {
  const r = test.get("/health");
  test.eq(r.status, 200);
  test.eq(r.json, { status: "ok" });
  test.eq(r.headers["content-type"], "application/json");
});

test("POST /notes creates a note", () => {
  const r = test.post("/notes", { body: JSON.stringify({ text: "hello" }) });
  test.eq(r.status, 201);
  test.eq(r.json, { id: 1, text: "hello" });
});

test("POST /notes refuses a note without text", () => {
  test.eq(test.post("/notes", { body: "not json" }).status, 400);
  test.eq(test.post("/notes", { body: JSON.stringify({ text: "" }) }).status, 400);
});

test("GET /notes lists, GET /notes/:id reads", () => {
  const notes = test.get("/notes").json as Note[];
  test.eq(notes.length, 1);
  test.eq(notes[0].text, "hello");
  test.eq((test.get("/notes/1").json as Note).text, "hello");
  test.eq(test.get("/notes/99").status, 404);
});

test("DELETE /notes/:id removes", () => {
  test.eq(test.delete("/notes/1").json, { ok: true });
  test.eq(test.delete("/notes/1").status, 404);
  test.eq(db.query("SELECT id FROM notes").length, 0);
});
