// The JavaScript half of the conformance app: route for route the same
// behaviour as app.lua. The specs in ../specs/*.toml drive both.
import { app } from "hull:app";
import { db } from "hull:db";
import { json } from "hull:json";
import { time } from "hull:time";

const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

// What `try` caught, as app.lua's `caught` reports it.
const caught = (f) => {
  try {
    f();
    return { ok: true };
  } catch (e) {
    return { ok: false, message: e.message };
  }
};

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
// No middleware ran: ctx is still an empty object, the same at every read.
app.get("/ctx/fresh", (req, res) => {
  const ctx = req.ctx;
  ctx.n = 1;
  res.json({ n: req.ctx.n, same: req.ctx === ctx, table: typeof ctx === "object" && ctx !== null });
});
app.get("/headers", (req, res) => res.json({ custom: req.headers["x-custom"], dup: req.headers["x-dup"] }));
// The whole req, none of its fields read first.
app.post("/req/whole/:id", (req, res) => res.json(req));
app.post("/req/encoded/:id", (req, res) => res.text(JSON.stringify(req)));
app.post("/req/nested/:id", (req, res) => res.json({ list: [req] }));
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
app.get("/db/params", (req, res) => {
  const holes = db.query("SELECT ? AS a, typeof(?) AS b, ? AS c", ["x", undefined, "z"])[0];
  let err;
  try {
    db.query(42);
  } catch (e) {
    err = e;
  }
  let rowsRefused = false;
  try {
    db.query("SELECT ? AS n", db.query("SELECT 1 AS n UNION ALL SELECT 2 AS n"));
  } catch (e) {
    rowsRefused = e.message.includes("parameter 1 is object");
  }
  res.json({
    holes,
    refused: err instanceof TypeError,
    code: err.code,
    message: err.message === "db.query: the SQL must be a string, got number",
    rows_refused: rowsRefused,
  });
});

// JSON ----------------------------------------------------------------------
app.get("/json/empty", (req, res) => res.json({}));
app.get("/json/empty-array", (req, res) => res.json([]));
app.get("/json/nested", (req, res) => res.json({ a: { b: { c: [1, 2, { d: "e" }] } }, list: ["x", "y"] }));
app.get("/json/unicode", (req, res) => res.json({ s: "héllo ✓ 日本 😀", esc: "quote\" back\\ nl\n tab\t ctl\u0001" }));
app.get("/json/numbers", (req, res) =>
  res.json({ int: 42, neg: -7, tenth: 0.1, half: 1.5, huge: 1e300, third: 1 / 3, three: 3.0 }));
app.get("/json/bool-null", (req, res) => res.json({ yes: true, no: false, list: [true, false] }));
// time (Hull §6.2): what every value looks like; the values themselves move.
app.get("/time", (req, res) => {
  const now = time.now(), ms = time.nowMs(), clock = time.clock();
  const date = time.date(), datetime = time.datetime();
  res.json({
    integers: Number.isInteger(now) && Number.isInteger(ms) && Number.isInteger(clock),
    ms_agrees: Math.abs(Math.floor(ms / 1000) - now) <= 1,
    clock_runs: clock >= 0,
    date: /^\d{4}-\d\d-\d\d$/.test(date),
    datetime: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(datetime),
    recent: now > 1700000000,
  });
});
app.post("/json/roundtrip", (req, res) => res.text(json.encode(json.decode(req.body))));
app.get("/json/failures", (req, res) => {
  const failure = (f) => {
    try {
      return f();
    } catch (e) {
      return e.name;
    }
  };
  const cycle = {};
  cycle.t = cycle;
  res.json({
    cycle: failure(() => json.encode(cycle)),
    bad: failure(() => json.decode("{bad")),
    number: failure(() => json.decode(5)),
    // What JSON.stringify threw is what res.json throws.
    res_cycle: failure(() => res.json(cycle)),
  });
});
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

// crypto (Hull §6.5) -------------------------------------------------------------
import { crypto } from "hull:crypto";

const KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const NONCE = "000102030405060708090a0b0c0d0e0f1011121314151617";
const RFC8032_PK = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const RFC8032_SK = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60" + RFC8032_PK;
app.get("/crypto/vectors", (req, res) => {
  const sig = crypto.ed25519Sign("", RFC8032_SK);
  const boxCt = crypto.box("hello, cove", NONCE,
    "ce8d3ad1ccb633ec7b70c17814a5c76ecd029685050d344745ba05870e587d59", "01".repeat(32));
  res.json({
    sha256: crypto.sha256("abc"),
    sha512_head: crypto.sha512("abc").slice(0, 16),
    hmac: crypto.hmacSha256("what do ya want for nothing?", "4a656665"),
    hmac_ok: crypto.hmacSha256Verify("what do ya want for nothing?", "4a656665",
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
    auth: crypto.auth("hello, cove", KEY),
    secretbox: crypto.secretbox("hello, cove", NONCE, KEY),
    opened: crypto.secretboxOpen("6c6e8a40d7976fd1a84e0706b6211683369a5423a8e68273d44aea", NONCE, KEY),
    tampered_is_nil: crypto.secretboxOpen("7c6e8a40d7976fd1a84e0706b6211683369a5423a8e68273d44aea", NONCE, KEY) === null,
    box: boxCt,
    box_opened: crypto.boxOpen(boxCt, NONCE,
      "a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209", "02".repeat(32)),
    sig,
    sig_ok: crypto.ed25519Verify("", sig, RFC8032_PK),
    sig_bad: crypto.ed25519Verify("x", sig, RFC8032_PK),
    b64: crypto.base64urlEncode(">>>???"),
    b64_back: crypto.base64urlDecode("YWI"),
    b64_padded_is_nil: crypto.base64urlDecode("YWI=") === null,
  });
});
app.get("/crypto/fresh", (req, res) => {
  const hash = crypto.hashPassword("hunter2");
  const ed = crypto.ed25519Keypair();
  const bx = crypto.boxKeypair();
  res.json({
    hash_prefix: hash.slice(0, 14),
    hash_len: hash.length,
    verify_ok: crypto.verifyPassword("hunter2", hash),
    verify_bad: crypto.verifyPassword("hunter3", hash),
    random_len: crypto.random(16).byteLength,
    keys: [ed.publicKey.length, ed.secretKey.length, bx.publicKey.length, bx.secretKey.length],
    signed: crypto.ed25519Verify("m", crypto.ed25519Sign("m", ed.secretKey), ed.publicKey),
  });
});
app.get("/crypto/bad-nonce", (req, res) => res.text(crypto.secretbox("x", "00", KEY)));
app.get("/crypto/bad-random", (req, res) => res.text(crypto.random(0)));
app.get("/crypto/caught", (req, res) => {
  res.json({
    nonce: caught(() => crypto.secretbox("x", "00", KEY)),
    random: caught(() => crypto.random(0)),
  });
});
// Data as bytes: an ArrayBuffer, a Uint8Array (also a window of a larger
// buffer), another typed array, a DataView.
app.get("/crypto/bytes", (req, res) => {
  const raw = new Uint8Array([0, 1, 2, 255]);
  const window = new Uint8Array([9, 0, 1, 2, 255, 9]).subarray(1, 5);
  res.json({
    b64: crypto.base64urlEncode(raw),
    sha256: crypto.sha256(raw.buffer),
    sha256_u16: crypto.sha256(new Uint16Array(new Uint8Array([0, 1, 2, 255]).buffer)),
    sha512_head: crypto.sha512(new DataView(raw.buffer)).slice(0, 16),
    hmac: crypto.hmacSha256(window, "4a656665"),
    random_b64_len: crypto.base64urlEncode(crypto.random(16)).length,
    random_sha_len: crypto.sha256(crypto.random(16)).length,
  });
});

// ---- app.* after load (Hull §3.1, §11.2) -----------------------------------
import { env } from "hull:env";
import { http } from "hull:http";
app.get("/app/late-route", (req, res) => {
  res.json(caught(() => app.get("/late", () => {})));
});
app.get("/app/late-manifest", (req, res) => {
  res.json({
    manifest: caught(() => app.manifest({ hosts: ["127.0.0.1"], env: ["HOME"] })),
    stored_is_nil: app.getManifest() === undefined || app.getManifest() === null,
    http: caught(() => http.get("http://127.0.0.1:9/")),
    env: caught(() => env.get("HOME")),
  });
});

// ---- templates (Hull §7) ----------------------------------------------------
import { template } from "hull:template";
app.get("/tpl/page", (req, res) => {
  res.html(template.render("conf/page.html", {
    title: "  Conf  ",
    html: "<i>&</i>",
    items: [{ name: "a", n: 12 }, { name: "b", n: 0 }, { name: "c", n: 3 }],
  }));
});
app.get("/tpl/string", (req, res) => {
  res.text(template.renderString(
    "{{ \"{{ x }}\" }}|{% if a == 1 and (b != 'x' or c) %}yes{% end %}|{{ s | length }}|{{ n }}|{{- ' t ' -}}|",
    { a: 1, b: "y", s: "hello", n: 42 }));
});
app.get("/tpl/bad", (req, res) => res.html(template.render("conf/bad.html", {})));
app.get("/tpl/missing", (req, res) => res.html(template.render("conf/nope.html", {})));

// ---- error codes (docs/api.md, "Error codes") ---------------------------------
import { kv } from "hull:kv";
// Registering routes and middleware (the capability table's `app.get`,
// `app.use`): the same messages and codes in both runtimes, while the app
// loads and from a handler, once it has loaded.
const refusal = (f) => {
  try {
    f();
    return "no error";
  } catch (e) {
    return { message: e.message, code: e.code };
  }
};
const registration = {
  pattern: refusal(() => app.get(5, () => {})),
  middleware: refusal(() => app.use("GET", "/x", 5)),
  invalid: refusal(() => app.get("nope", () => {})),
  method: refusal(() => app.use("", "/x", () => {})),
  manifest: refusal(() => app.manifest({ env: "HOME" })),
};
app.get("/errors/routes", (req, res) => {
  registration.late = refusal(() => app.post("/late", () => {}));
  res.json(registration);
});

app.get("/errors/codes", (req, res) => {
  const code = (f) => {
    try {
      f();
      return "no error";
    } catch (e) {
      return e.code ?? false;
    }
  };
  res.json({
    sql: code(() => db.query("SELECT * FROM nowhere")),
    constraint: code(() => db.exec("INSERT INTO notes (title) VALUES (NULL)")),
    reserved: code(() => db.query("SELECT * FROM _hull_migrations")),
    kv: code(() => kv.set("", 1)),
    kv_argument: code(() => kv.incr("k", 1.5)),
    crypto_input: code(() => crypto.secretbox("x", "00", KEY)),
    crypto_range: code(() => crypto.random(0)),
    crypto_argument: code(() => crypto.sha256()),
    env: code(() => env.get("HOME")),
    http: code(() => http.get("http://127.0.0.1:9/")),
    res_argument: code(() => res.status("abc")),
    res_invalid: code(() => res.header("X-Bad", "a\nb")),
    publish_argument: code(() => app.publish(1, "x")),
    plain: code(() => {
      throw new Error("boom");
    }),
    raised_again: code(() => {
      try {
        kv.set("", 1);
      } catch (e) {
        throw e;
      }
    }),
  });
});
