// bench_db: the SQLite endpoints of the database benchmarks (bench/):
// a 20-row read, one insert, ten inserts in one transaction, and both.
// The JavaScript twin of app.lua.
//
//   cove -p 8080 -d bench.db examples/bench_db/app.js
//   wrk -t4 -c100 -d10s http://localhost:8080/read

import { app } from "hull:app";
import { db } from "hull:db";
import { time } from "hull:time";

const SEED_ROWS = 1000;

// Newest first; ties (same second) by id, so the latest insert leads.
const READ = "SELECT id, kind, payload, ts FROM events ORDER BY ts DESC, id DESC LIMIT 20";
const INSERT = "INSERT INTO events (kind, payload, ts) VALUES (?, ?, ?)";

// Seed once, in one transaction, so /read has rows to page through. Seed
// times lie in the past, one second apart: anything written later is newer.
const [{ n: have }] = db.query("SELECT COUNT(*) AS n FROM events");
if (have < SEED_ROWS) {
  const now = time.now();
  db.batch(() => {
    for (let i = have + 1; i <= SEED_ROWS; i++) {
      db.exec(INSERT, ["seed", `{"n":${i}}`, now - SEED_ROWS + i]);
    }
  });
}

const insert = (kind) => db.exec(INSERT, [kind, `{"at":${time.nowMs()}}`, time.now()]);

app.get("/health", (req, res) => {
  res.json({ status: "ok" });
});

app.get("/read", (req, res) => {
  res.json(db.query(READ));
});

app.post("/write", (req, res) => {
  res.json({ inserted: insert("write") });
});

app.post("/write-batch", (req, res) => {
  let inserted = 0;
  db.batch(() => {
    for (let i = 0; i < 10; i++) inserted += insert("batch");
  });
  res.json({ inserted });
});

app.get("/mixed", (req, res) => {
  insert("mixed");
  res.json(db.query(READ));
});
