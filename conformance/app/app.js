// The JavaScript half of the conformance app: route for route the same
// behaviour as app.lua. The specs in ../specs/*.toml drive both.
import { app } from "hull:app";
import { db } from "hull:db";
import { json } from "hull:json";

const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

// Routing -----------------------------------------------------------------
app.get("/users/:id", (req, res) => res.json({ id: req.params.id }));
app.get("/users/:id/posts/:post", (req, res) => res.json({ id: req.params.id, post: req.params.post }));
app.get("/order/first", (req, res) => res.text("literal route"));
app.get("/order/:x", (req, res) => res.text(`param route ${req.params.x}`));
app.get("/whoami", (req, res) => res.json({ method: req.method, path: req.path }));
app.del("/things/:id", (req, res) => res.json({ deleted: req.params.id }));
app.put("/things/:id", (req, res) => res.json({ put: req.params.id }));
app.patch("/things/:id", (req, res) => res.json({ patched: req.params.id }));
app.options("/things/:id", (req, res) => { res.status(204); });

// Middleware --------------------------------------------------------------
app.use("*", "/mw/*", (req, res) => {
  res.header("X-Pre", "1");
  req.ctx.trace = ["pre1"];
  return 0;
});
app.use("*", "/mw/*", (req) => {
  req.ctx.trace.push("pre2");
  return false;
});
app.use("GET", "/mw/stop", (req, res) => {
  res.status(403);
  res.text("stopped by pre");
  return 1;
});
app.usePost("*", "/mw/*", (req, res) => {
  req.ctx.trace.push("post");
  res.header("X-Post", "1");
});
app.usePost("POST", "/mw/stop-post", (req, res) => {
  res.status(401);
  res.text("stopped by post");
  return true;
});
app.get("/mw/trace", (req, res) => res.json({ trace: req.ctx.trace }));
app.get("/mw/stop", (req, res) => res.text("handler must not run"));
app.post("/mw/stop-post", (req, res) => res.text("handler must not run"));
app.use("*", "/mwerr/*", (req, res) => {
  res.header("X-Before-Error", "kept");
  throw new Error("middleware boom");
});
app.get("/mwerr/x", (req, res) => res.text("handler must not run"));

// Responses ---------------------------------------------------------------
app.get("/res/status", (req, res) => {
  res.status(201);
  res.json({ created: true });
});
app.get("/res/json-code", (req, res) => res.json({ accepted: true }, 202));
app.get("/res/text", (req, res) => res.text("plain text"));
app.get("/res/html", (req, res) => res.html("<h1>hi</h1>"));
app.get("/res/redirect", (req, res) => res.redirect("/target"));
app.get("/res/redirect-303", (req, res) => res.redirect("/other", 303));
app.get("/res/headers", (req, res) => {
  res.header("X-One", "1");
  res.header("Set-Cookie", "a=1");
  res.header("Set-Cookie", "b=2");
  res.text("headers");
});
app.get("/res/content-type", (req, res) => {
  res.header("Content-Type", "application/vnd.cove+json");
  res.json({ typed: true });
});
app.get("/res/chain", (req, res) => res.status(202).header("X-Chain", "yes").text("chained"));
app.get("/res/no-content", (req, res) => { res.status(204); });
app.get("/status/:code", (req, res) => {
  res.status(Number(req.params.code));
  res.text(`status ${req.params.code}`);
});

// Requests ----------------------------------------------------------------
app.get("/query", (req, res) => res.json({ count: Object.keys(req.query).length, query: req.query }));
app.get("/headers", (req, res) => res.json({ custom: req.headers["x-custom"], dup: req.headers["x-dup"] }));
app.post("/echo", (req, res) => res.text(req.body ?? "<nil>"));
// The UTF-8 size of the body as JS sees it.
app.post("/body-size", (req, res) => {
  let size = 0;
  for (const ch of req.body ?? "") {
    const c = ch.codePointAt(0);
    size += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  res.json({ size });
});

// Database ----------------------------------------------------------------
app.post("/db/types", (req, res) => {
  db.exec("INSERT INTO kinds (i, f, t, b, n) VALUES (42, 1.5, 'text ✓', x'00ff41', NULL)");
  res.json({ id: db.lastId() });
});
app.get("/db/types", (req, res) => {
  const [row] = db.query("SELECT i, f, t, b, n FROM kinds WHERE b IS NOT NULL ORDER BY id DESC LIMIT 1");
  res.json({
    i: row.i, i_is_integer: Number.isInteger(row.i),
    f: row.f, t: row.t, b: hex(row.b), n_missing: row.n === null,
  });
});
app.post("/db/bind", (req, res) => {
  db.exec("INSERT INTO kinds (i, f, t) VALUES (?, ?, ?)", [7, 2.25, "seven"]);
  const [row] = db.query("SELECT typeof(?) AS yes, ? AS yes_value, typeof(?) AS absent", [true, true, null]);
  res.json({ id: db.lastId(), yes: row.yes, yes_value: row.yes_value, absent: row.absent });
});
app.post("/db/update", (req, res) => {
  res.json({ changed: db.exec("UPDATE kinds SET t = ? WHERE i = ?", ["updated", 42]) });
});
app.post("/notes", (req, res) => {
  db.exec("INSERT INTO notes (title) VALUES (?)", [req.body]);
  res.json({ id: db.lastId() }, 201);
});
app.post("/db/batch-ok", (req, res) => {
  db.batch(() => {
    db.exec("INSERT INTO notes (title) VALUES ('batch 1')");
    db.exec("INSERT INTO notes (title) VALUES ('batch 2')");
  });
  res.json({ count: db.query("SELECT COUNT(*) AS n FROM notes")[0].n });
});
app.post("/db/batch-fail", (req, res) => {
  let ok = true;
  try {
    db.batch(() => {
      db.exec("INSERT INTO notes (title) VALUES ('rolled back')");
      throw new Error("batch boom");
    });
  } catch {
    ok = false;
  }
  res.json({ ok, count: db.query("SELECT COUNT(*) AS n FROM notes")[0].n });
});
app.get("/db/big", (req, res) => {
  res.json(db.query("SELECT 4611686018427387904 AS big, -9007199254740993 AS neg")[0]);
});
app.get("/db/error", (req, res) => {
  try {
    db.query("SELECT * FROM no_such_table");
    res.json({ ok: true, mentions_table: false });
  } catch (e) {
    res.json({ ok: false, mentions_table: String(e.message).includes("no_such_table") });
  }
});
app.get("/db/reserved", (req, res) => {
  try {
    db.query("SELECT * FROM _hull_migrations");
    res.json({ ok: true, reserved: false });
  } catch (e) {
    res.json({ ok: false, reserved: String(e.message).includes("_hull_") });
  }
});

// JSON ----------------------------------------------------------------------
app.get("/json/empty", (req, res) => res.json({}));
app.get("/json/empty-array", (req, res) => res.json([]));
app.get("/json/nested", (req, res) => res.json({ a: { b: { c: [1, 2, { d: "e" }] } }, list: ["x", "y"] }));
app.get("/json/unicode", (req, res) => res.json({ s: "héllo ✓ 日本 😀", esc: "quote\" back\\ nl\n tab\t ctl\u0001" }));
app.get("/json/numbers", (req, res) =>
  res.json({ int: 42, neg: -7, tenth: 0.1, half: 1.5, huge: 1e300, third: 1 / 3, three: 3.0 }));
app.get("/json/bool-null", (req, res) => res.json({ yes: true, no: false, list: [true, false] }));
app.post("/json/roundtrip", (req, res) => res.text(json.encode(json.decode(req.body))));
app.post("/json/bad", (req, res) => {
  try {
    json.decode(req.body);
    res.json({ ok: true });
  } catch {
    res.json({ ok: false });
  }
});

// Errors and limits -----------------------------------------------------------
app.get("/error/handler", (req, res) => {
  res.header("X-Before-Error", "kept");
  throw new Error("handler boom");
});
app.get("/error/bad-status", (req, res) => { res.status(1000); });
app.get("/loop", () => {
  for (;;) {}
});
app.get("/loop-caught", () => {
  for (;;) {
    try {
      for (;;) {}
    } catch {
      // the budget error cannot be caught: this never runs
    }
  }
});
