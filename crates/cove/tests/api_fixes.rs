//! Fixes to the app API (the rest is in the conformance suite: caught
//! crypto/kv/app errors as plain messages, `app.manifest` after load, JS
//! crypto over bytes):
//! * Lua errors from `crypto.*`, `kv.*` and `app.*` are plain strings at the
//!   calling line, logged once as `app.lua:12: message`, at load time too;
//! * JS `db.batch` refuses a function that is async or returns a promise,
//!   rolling back what it did, instead of committing at the first `await`.

use std::path::PathBuf;

use serde_json::json;

use crate::util::{run, Server};

/// A temporary app directory holding `file` with `source`; the path of the file.
fn app(file: &str, source: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(file);
    std::fs::write(&path, source).unwrap();
    (tmp, path)
}

/// The 1-based line of `source` holding `marker`.
fn line(source: &str, marker: &str) -> usize {
    source
        .lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker:?} in the app"))
        + 1
}

const LUA_APP: &str = r#"local kv = require("hull.kv")
app.get("/crypto", function(req, res)
  crypto.secretbox("x", "00", "00") -- crypto
end)
app.get("/kv", function(req, res)
  kv.set("t", "v", -5) -- kv
end)
app.get("/late", function(req, res)
  app.get("/x", function() end) -- late
end)
app.get("/manifest", function(req, res)
  app.manifest({ hosts = { "127.0.0.1" } }) -- manifest
end)
app.get("/pcall", function(req, res)
  local _, direct = pcall(crypto.sha256)
  local _, located = pcall(function() local h = crypto.sha256({}) return h end) -- located
  local _, handler = pcall(app.get, "/y")
  local _, kv_err = pcall(kv.incr, "k", "x")
  res:json({
    types = { type(direct), type(located), type(handler), type(kv_err) },
    direct = direct, located = located, handler = handler, kv = kv_err,
  })
end)
"#;

#[test]
fn lua_crypto_kv_and_app_errors_are_strings_logged_once_at_the_calling_line() {
    let (_tmp, path) = app("app.lua", LUA_APP);
    let s = Server::start(&path, &["--workers", "1"]);
    let res = s.get("/pcall");
    assert_eq!(res.status, 200, "{}", s.log());
    let at = line(LUA_APP, "-- located");
    assert_eq!(
        res.json(),
        json!({
            "types": ["string", "string", "string", "string"],
            // Called by pcall itself: no Lua line to name.
            "direct": "crypto.sha256: argument 1 must be a string, got nil",
            "located": format!("app.lua:{at}: crypto.sha256: argument 1 must be a string, got table"),
            "handler": "app.get: the handler must be a function, got nil",
            "kv": "kv.incr: step must be an integer",
        })
    );
    for (path, marker, message) in [
        ("/crypto", "-- crypto", "crypto.secretbox: key must be 64 hex chars (32 bytes)"),
        ("/kv", "-- kv", "kv.set: ttl must be a positive number of seconds"),
        (
            "/late",
            "-- late",
            "app.get: routes and middleware must be registered while the app loads (at the top level of the app file)",
        ),
        (
            "/manifest",
            "-- manifest",
            "app.manifest: only at load time (at the top level of the app file)",
        ),
    ] {
        assert_eq!(s.get(path).status, 500);
        let expected = format!("GET {path}: app.lua:{}: {message}\n", line(LUA_APP, marker));
        let log = s.wait_for_log(&expected);
        assert_eq!(log.matches(&expected).count(), 1, "{log}");
    }
    let log = s.log();
    for unwanted in ["runtime error", "stack traceback", "app.lua:3: app.lua"] {
        assert!(!log.contains(unwanted), "{unwanted:?} in the log:\n{log}");
    }
}

#[test]
fn lua_app_errors_at_load_name_the_line_once() {
    for (source, message) in [
        (
            "app.get(\"/\", function(req, res) end)\napp.get(\"tasks\", function() end)\n",
            "app.lua:2: app.get: route pattern must start with '/': \"tasks\"",
        ),
        (
            "app.get(\"/\", function(req, res) end)\napp.use(\"GET\", \"/x\")\n",
            "app.lua:2: app.use: the middleware must be a function, got nil",
        ),
        (
            "app.manifest(\"hosts\")\napp.get(\"/\", function(req, res) end)\n",
            "app.lua:1: app.manifest: the argument must be a table, got string",
        ),
        (
            "local key = crypto.hmac_sha256(\"x\", \"zz\")\n",
            "app.lua:1: crypto.hmac_sha256: invalid hex in key",
        ),
    ] {
        let (tmp, path) = app("app.lua", source);
        let db = tmp.path().join("data.db");
        let r = run(&[
            "-p",
            "0",
            "-d",
            db.to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stderr.contains(message), "{message:?} in:\n{}", r.stderr);
        assert_eq!(r.stderr.matches("app.lua:").count(), 1, "{}", r.stderr);
        assert!(!r.stderr.contains("runtime error"), "{}", r.stderr);
    }
}

const JS_BATCH_APP: &str = r#"import { app } from "hull:app";
import { db } from "hull:db";

db.exec("CREATE TABLE IF NOT EXISTS t (v TEXT)");
// The rows the batch left, read after pending continuations ran.
const rows = () => {
  const n = db.query("SELECT count(*) AS n FROM t")[0].n;
  db.exec("DELETE FROM t");
  return n;
};
const caught = (f) => {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    return { ok: false, name: e.name, message: e.message };
  }
};
app.get("/async", async (req, res) => {
  const r = caught(() => db.batch(async () => {
    db.exec("INSERT INTO t VALUES ('before')");
    await null;
    db.exec("INSERT INTO t VALUES ('after')");
  }));
  await null;
  await null;
  res.json({ ...r, rows: rows() });
});
app.get("/promise", async (req, res) => {
  const r = caught(() => db.batch(() => {
    db.exec("INSERT INTO t VALUES ('sync part')");
    return Promise.resolve(1);
  }));
  await null;
  res.json({ ...r, rows: rows() });
});
app.get("/thenable", (req, res) => {
  const r = caught(() => db.batch(() => {
    db.exec("INSERT INTO t VALUES ('x')");
    return { then() {} };
  }));
  res.json({ ...r, rows: rows() });
});
app.get("/sync", (req, res) => {
  const r = caught(() => db.batch(() => {
    db.exec("INSERT INTO t VALUES ('kept')");
    return 7;
  }));
  res.json({ ...r, rows: rows() });
});
app.get("/uncaught", async (req, res) => {
  await db.batch(async () => {
    db.exec("INSERT INTO t VALUES ('x')");
  });
  res.text("not reached");
});
"#;

#[test]
fn js_db_batch_refuses_a_promise_and_keeps_nothing() {
    let (_tmp, path) = app("app.js", JS_BATCH_APP);
    let s = Server::start(&path, &["--workers", "1"]);
    let refused = |why: &str| {
        json!({
            "ok": false,
            "name": "TypeError",
            "message": format!("db.batch: the function must be synchronous ({why}); do the awaits before or after the batch"),
            "rows": 0,
        })
    };
    assert_eq!(
        s.get("/async").json(),
        refused("it is async"),
        "{}",
        s.log()
    );
    assert_eq!(s.get("/promise").json(), refused("it returned a promise"));
    assert_eq!(s.get("/thenable").json(), refused("it returned a promise"));
    assert_eq!(
        s.get("/sync").json(),
        json!({"ok": true, "value": 7, "rows": 1})
    );
    assert_eq!(s.get("/uncaught").status, 500);
    let at = line(JS_BATCH_APP, "await db.batch(async");
    s.wait_for_log(&format!(
        "GET /uncaught: app.js:{at}: TypeError: db.batch: the function must be synchronous (it is async)"
    ));
    // Nothing is left open: the worker's next batch works.
    assert_eq!(
        s.get("/sync").json(),
        json!({"ok": true, "value": 7, "rows": 1})
    );
}

/// `app.get_manifest()` gives back the manifest in force: a copy, as JSON
/// holds it (functions left out), which later changes to the script's own
/// value do not reach; the same in both runtimes.
#[test]
fn the_manifest_read_back_is_the_one_in_force() {
    let lua = r#"local m = { env = { "HOME" }, name = "demo", check = function() end }
app.manifest(m)
m.name = "changed"
app.get("/", function(req, res)
  local got = app.get_manifest()
  res:json({ name = got.name, env = got.env, check = type(got.check), same = got == m })
end)
"#;
    let js = r#"import { app } from "hull:app";
const m = { env: ["HOME"], name: "demo", check() {} };
app.manifest(m);
m.name = "changed";
app.get("/", (req, res) => {
  const got = app.getManifest();
  res.json({ name: got.name, env: got.env, check: typeof got.check, same: got === m });
});
"#;
    let lua_check = json!({"name": "demo", "env": ["HOME"], "check": "nil", "same": false});
    let js_check = json!({"name": "demo", "env": ["HOME"], "check": "undefined", "same": false});
    for (file, source, expected) in [("app.lua", lua, lua_check), ("app.js", js, js_check)] {
        let (_tmp, path) = app(file, source);
        let s = Server::start(&path, &["--workers", "1"]);
        let r = s.get("/");
        assert_eq!(r.status, 200, "{file}: {}", r.text());
        assert_eq!(r.json(), expected, "{file}");
    }
}
