// Cove's JavaScript implementation of the `pg` and `redis` benchmark routes
// (bench/peers/README.md), the twin of app.lua. The handlers await the Async
// forms, so the worker serves other requests while PostgreSQL or Redis
// answers (the synchronous db.query / kv.get would block the worker).

import { app } from "hull:app";
import { db } from "hull:db";
import { kv } from "hull:kv";
import { time } from "hull:time";

// The readiness check of the harness.
app.get("/hello", (req, res) => {
  res.text("Hello World!");
});

// pg group ------------------------------------------------------------------

const READ = "SELECT id, name, value FROM bench_items WHERE id = ?";
const WRITE = "INSERT INTO bench_writes (payload, ts) VALUES (?, ?) RETURNING id";

app.get("/pg/read", async (req, res) => {
  const rows = await db.queryAsync(READ, [Number(req.query.id)]);
  if (rows.length === 0) {
    res.status(404).json({ error: "no such item" });
    return;
  }
  res.json(rows[0]);
});

app.post("/pg/write", async (req, res) => {
  const rows = await db.queryAsync(WRITE, [req.body, time.now()]);
  res.json({ id: rows[0].id });
});

// redis group ---------------------------------------------------------------

kv.set("greeting", "hello");

// One GET and one INCR, in turn.
app.get("/redis", async (req, res) => {
  const greeting = await kv.getAsync("greeting");
  const count = await kv.incrAsync("counter");
  res.json({ count, greeting });
});
