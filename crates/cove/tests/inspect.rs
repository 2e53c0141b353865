//! `cove routes` and `cove db schema|query`: one JSON line on stdout, the
//! shapes of Hull's `hull agent` (§1.4), `{"error": …}` and exit 1 on failure.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::migrate::{cove_in, Ran};

fn example_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Run `cove args…` in a fresh temp directory; the single stdout line as JSON.
fn json_of(args: &[&str], code: i32) -> Value {
    let cwd = tempfile::tempdir().expect("cwd");
    json_in(cwd.path(), args, code)
}

fn json_in(cwd: &Path, args: &[&str], code: i32) -> Value {
    let Ran { stdout, .. } = cove_in(cwd, args).expect(code);
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

fn rest_api_routes() -> Value {
    json!([
        { "method": "GET", "pattern": "/tasks" },
        { "method": "GET", "pattern": "/tasks/:id" },
        { "method": "POST", "pattern": "/tasks" },
        { "method": "PUT", "pattern": "/tasks/:id" },
        { "method": "DELETE", "pattern": "/tasks/:id" },
    ])
}

#[test]
fn routes_of_rest_api_in_both_runtimes() {
    let dir = example_dir("rest_api");
    // Both entries exist: Lua is the default, as in Hull's agent commands.
    let lua = json_of(&["routes", s(&dir)], 0);
    assert_eq!(
        lua,
        json!({ "runtime": "lua", "routes": rest_api_routes(), "middleware": [] })
    );
    let js = json_of(&["routes", s(&dir), "--runtime", "js"], 0);
    assert_eq!(
        js,
        json!({ "runtime": "js", "routes": rest_api_routes(), "middleware": [] })
    );
    // An entry file picks its own runtime.
    let by_file = json_of(&["routes", s(&dir.join("app.js"))], 0);
    assert_eq!(by_file["runtime"], "js");
    // The default directory is the current one.
    let here = json_in(&dir, &["routes"], 0);
    assert_eq!(here["runtime"], "lua");
}

#[test]
fn routes_list_middleware_pre_then_post() {
    let out = json_of(&["routes", s(&fixture_dir("middleware"))], 0);
    let mw = out["middleware"].as_array().expect("middleware array");
    assert!(!mw.is_empty());
    let phases: Vec<&str> = mw.iter().map(|m| m["phase"].as_str().unwrap()).collect();
    let first_post = phases.iter().position(|p| *p == "post").expect("a post");
    assert!(
        phases[first_post..].iter().all(|p| *p == "post"),
        "{phases:?}"
    );
    assert_eq!(
        mw[0],
        json!({ "method": "*", "pattern": "/*", "phase": "pre" })
    );
}

#[test]
fn websocket_endpoints_are_listed_as_ws() {
    for runtime in ["lua", "js"] {
        let dir = fixture_dir("websocket");
        let out = json_of(&["routes", s(&dir), "--runtime", runtime], 0);
        let routes = out["routes"].as_array().expect("routes");
        assert_eq!(routes[0], json!({ "method": "WS", "pattern": "/echo" }));
        assert_eq!(
            routes[2],
            json!({ "method": "GET", "pattern": "/said/:room" })
        );
    }
}

#[test]
fn routes_errors_are_json() {
    let empty = tempfile::tempdir().expect("dir");
    let out = json_of(&["routes", s(empty.path())], 1);
    let msg = out["error"].as_str().expect("error");
    assert!(msg.contains("no entry point found"), "{msg}");

    let out = json_of(
        &["routes", s(&example_dir("rest_api")), "--runtime", "js"],
        0,
    );
    assert_eq!(out["runtime"], "js");
    let out = json_of(&["routes", s(&fixture_dir("basic")), "--runtime", "js"], 1);
    assert!(
        out["error"].as_str().unwrap().contains("no app.js"),
        "{out}"
    );

    let out = json_of(&["routes", s(&fixture_dir("syntax_error"))], 1);
    assert!(out["error"].as_str().unwrap().contains("app.lua"), "{out}");
}

#[test]
fn schema_from_migrations_when_there_is_no_database() {
    let out = json_of(&["db", "schema", s(&example_dir("rest_api"))], 0);
    let tables = out["tables"].as_array().expect("tables");
    let names: Vec<&str> = tables.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["_hull_migrations", "tasks"]);
    assert_eq!(
        tables[1]["columns"],
        json!([
            { "name": "id", "type": "INTEGER", "pk": true },
            { "name": "title", "type": "TEXT", "notnull": true },
            { "name": "done", "type": "INTEGER", "default": "0" },
            { "name": "created_at", "type": "INTEGER" },
        ])
    );
}

/// An app directory whose data.db has one row the migrations would not make.
fn app_with_data() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    let conn = rusqlite::Connection::open(dir.path().join("data.db")).expect("db");
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, pic BLOB);
         INSERT INTO items VALUES (1, 'pen', 2.0, x'00ff10'), (2, 'ink', 0.1, NULL);",
    )
    .expect("fill");
    dir
}

fn count_items(dir: &Path) -> i64 {
    let conn = rusqlite::Connection::open(dir.join("data.db")).expect("db");
    conn.query_row("SELECT count(*) FROM items", [], |r| r.get(0))
        .expect("count")
}

#[test]
fn schema_and_query_read_data_db_in_the_app_directory() {
    let app = app_with_data();
    let out = json_of(&["db", "schema", s(app.path())], 0);
    assert_eq!(out["tables"][0]["name"], "items");
    assert_eq!(
        out["tables"][0]["columns"][1],
        json!({ "name": "name", "type": "TEXT", "notnull": true })
    );

    let out = json_of(
        &[
            "db",
            "query",
            "SELECT * FROM items ORDER BY id",
            s(app.path()),
        ],
        0,
    );
    assert_eq!(
        out,
        json!({
            "columns": ["id", "name", "price", "pic"],
            // REAL stays a number (2.0, not "2"); BLOB is base64.
            "rows": [[1, "pen", 2.0, { "base64": "AP8Q" }], [2, "ink", 0.1, null]],
            "count": 2
        })
    );
    assert!(
        cove_in(
            app.path(),
            &["db", "query", "SELECT price FROM items WHERE id = 1"]
        )
        .expect(0)
        .stdout
        .contains("[[2.0]]"),
        "REAL printed as 2.0"
    );

    // No rows still names the columns.
    let out = json_in(
        app.path(),
        &["db", "query", "SELECT id, name FROM items WHERE 0"],
        0,
    );
    assert_eq!(
        out,
        json!({ "columns": ["id", "name"], "rows": [], "count": 0 })
    );
}

#[test]
fn writes_need_write() {
    let app = app_with_data();
    let insert = "INSERT INTO items (name) VALUES ('cap')";
    let out = json_of(&["db", "query", insert, s(app.path())], 1);
    assert_eq!(
        out,
        json!({ "error": "the statement may change the database; pass --write to run it" })
    );
    assert_eq!(count_items(app.path()), 2);

    let out = json_of(
        &[
            "db",
            "query",
            &format!("{insert} RETURNING id"),
            s(app.path()),
            "--write",
        ],
        0,
    );
    assert_eq!(out, json!({ "columns": ["id"], "rows": [[3]], "count": 1 }));
    assert_eq!(count_items(app.path()), 3);
}

#[test]
fn db_flag_names_the_file() {
    let app = app_with_data();
    let cwd = tempfile::tempdir().expect("cwd");
    let db = app.path().join("data.db");
    let out = json_in(
        cwd.path(),
        &[
            "db",
            "query",
            "SELECT count(*) AS n FROM items",
            "-d",
            s(&db),
        ],
        0,
    );
    assert_eq!(out["rows"], json!([[2]]));

    let out = json_in(cwd.path(), &["db", "schema", "-d", "missing.db"], 1);
    let msg = out["error"].as_str().unwrap();
    assert!(msg.contains("missing.db: no such database file"), "{msg}");
    assert!(!cwd.path().join("missing.db").exists());
}

#[test]
fn query_errors_are_json() {
    let dir = example_dir("rest_api");
    let out = json_of(&["db", "query", "SELECT * FROM nope", s(&dir)], 1);
    assert_eq!(out, json!({ "error": "no such table: nope" }));
    let out = json_of(&["db", "query", "SELECT 1; SELECT 2", s(&dir)], 1);
    assert!(
        out["error"].as_str().unwrap().contains("one statement"),
        "{out}"
    );

    // A migration that fails is named.
    let app = tempfile::tempdir().expect("dir");
    fs::create_dir(app.path().join("migrations")).expect("mkdir");
    fs::write(app.path().join("migrations/001_bad.sql"), "CREATE TABLE (").expect("write");
    let out = json_of(&["db", "schema", s(app.path())], 1);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("migrations/001_bad.sql"),
        "{out}"
    );
}
