//! JavaScript sees a capability's failure as a `CoveError` (an `Error`)
//! with a stable `code`, its message and printing unchanged; argument
//! mistakes stay `TypeError`s. (Lua: strings with `err:code()`; both in
//! conformance/specs/errors.toml.)

use serde_json::{json, Value};

use crate::util::Server;

const APP: &str = r#"
import { app } from "hull:app";
import { db } from "hull:db";
import { kv } from "hull:kv";
import { env } from "hull:env";
import { http } from "hull:http";

const probe = (f) => {
  try {
    f();
    return null;
  } catch (e) {
    return {
      cove: e instanceof CoveError,
      error: e instanceof Error,
      type: e instanceof TypeError,
      code: e.code ?? null,
      text: String(e),
    };
  }
};

app.get("/", (req, res) =>
  res.json({
    reserved: probe(() => db.query("SELECT * FROM _hull_migrations")),
    sql: probe(() => db.exec("INSERT INTO nowhere VALUES (1)")),
    kv: probe(() => kv.set("", 1)),
    env: probe(() => env.get("HOME")),
    http: probe(() => http.get("https://example.com/")),
    argument: probe(() => db.query(42)),
  }),
);

app.get("/async", async (req, res) => {
  try {
    await db.queryAsync("SELECT * FROM _hull_migrations");
    res.json({ rejected: false });
  } catch (e) {
    res.json({ rejected: true, cove: e instanceof CoveError, code: e.code });
  }
});
"#;

fn server() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = dir.path().join("app.js");
    std::fs::write(&app, APP).expect("write");
    let s = Server::start(&app, &["--workers", "1"]);
    (dir, s)
}

fn coded(v: &Value, code: &str, starts: &str) {
    assert_eq!(v["cove"], true, "{v}");
    assert_eq!(v["error"], true, "{v}");
    assert_eq!(v["code"], code, "{v}");
    let text = v["text"].as_str().expect("text");
    assert!(text.starts_with(starts), "{code}: {text}");
}

#[test]
fn capability_failures_are_cove_errors_with_codes() {
    let (_dir, s) = server();
    let r = s.get("/");
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    coded(
        &v["reserved"],
        "db.reserved",
        "Error: db.query failed: access denied",
    );
    coded(&v["sql"], "db.sql", "Error: db.exec failed: ");
    coded(&v["kv"], "kv.bad_key", "Error: kv.set: key must be");
    coded(
        &v["env"],
        "env.not_configured",
        "Error: env.get: env is not configured",
    );
    coded(
        &v["http"],
        "http.not_configured",
        "Error: http not configured",
    );
    assert_eq!(v["argument"]["type"], true, "{v}");
    assert_eq!(v["argument"]["cove"], false, "{v}");
}

#[test]
fn a_rejected_promise_carries_the_code_too() {
    let (_dir, s) = server();
    let v = s.get("/async").json();
    assert_eq!(
        v,
        json!({ "rejected": true, "cove": true, "code": "db.reserved" })
    );
}
