// Cove's JavaScript implementation of the benchmark routes: the twin of
// app.lua, answering with the same bytes (bench/peers/README.md lists the
// routes; `bench/run` checks the bodies before measuring). app.lua's JSON
// encoder sorts object keys, so multi-key objects below list theirs in
// sorted order.

import { app } from "hull:app";
import { db } from "hull:db";
import { time } from "hull:time";

// http group -------------------------------------------------------------

app.get("/hello", (req, res) => {
  res.text("Hello World!");
});

app.get("/json", (req, res) => {
  res.json({ message: "Hello, World!" });
});

// The toy routing benchmark: similar prefixes, separate routes.
app.get("/hey", (req, res) => res.text("hey"));
app.get("/hell", (req, res) => res.text("hell"));
app.get("/about", (req, res) => res.text("about"));

app.get("/health", (req, res) => {
  res.json({ runtime: "js", status: "ok", uptime: time.clock() });
});

app.get("/greet/:name", (req, res) => {
  res.json({ greeting: `Hello, ${req.params.name}!` });
});

app.post("/echo", (req, res) => {
  res.json({ body: req.body });
});

app.post("/greet/:name", (req, res) => {
  res.json({ body: req.body, greeting: `Hello, ${req.params.name}!` });
});

// sqlite group (Hull's hello and bench_db routes) -------------------------

if (db.query("SELECT COUNT(*) AS n FROM events")[0].n < 1000) {
  db.batch(() => {
    for (let i = 1; i <= 1000; i++) {
      db.exec("INSERT INTO events (kind, payload, ts) VALUES ('seed', ?, ?)",
        [`{"n":${i}}`, time.now()]);
    }
  });
}

const READ = "SELECT id, kind, payload, ts FROM events ORDER BY ts DESC LIMIT 20";
const WRITE = "INSERT INTO events (kind, payload, ts) VALUES ('write', ?, ?)";

app.get("/", (req, res) => {
  db.exec("INSERT INTO visits (path, ts) VALUES (?, ?)", [req.path, time.now()]);
  res.json({ message: "Hello!", time: time.datetime() });
});

app.get("/visits", (req, res) => {
  res.json(db.query("SELECT id, path, ts FROM visits ORDER BY id DESC LIMIT 20"));
});

app.get("/read", (req, res) => {
  res.json(db.query(READ));
});

app.post("/write", (req, res) => {
  const n = db.exec(WRITE, [req.body, time.now()]);
  res.json({ inserted: n });
});

app.post("/write-batch", (req, res) => {
  let n = 0;
  db.batch(() => {
    for (let i = 0; i < 10; i++) {
      n += db.exec(WRITE, [req.body, time.now()]);
    }
  });
  res.json({ inserted: n });
});

app.get("/mixed", (req, res) => {
  db.exec("INSERT INTO events (kind, payload, ts) VALUES ('mixed', '{}', ?)", [time.now()]);
  res.json(db.query(READ));
});
