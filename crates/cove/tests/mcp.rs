//! `cove mcp` driven by a client that is not ours: the official Python MCP
//! SDK (tests/mcp/client.py; mcp==2.3.0, installed by .ci/run into
//! ~/.cache/cove-mcp-venv). The interpreter is $COVE_MCP_PYTHON, else that
//! venv's; without it the tests are skipped, unless COVE_REQUIRE_SERVICES
//! is set.
//!
//! The tools work through `cove dev`'s record in the app's .cove/ (dev.json,
//! events.jsonl, last_error.json, reload: docs/agents.md); most tests let
//! `cove mcp` attach to a dev server started here, two let it start its own.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::util::{bin, run, run_command, write_file as write, Exit, Server, TIMEOUT};

const APP: &str = r#"app.get("/items", function(req, res)
  res:json(db.query("SELECT id, name FROM items ORDER BY id"))
end)
app.get("/boom", function(req, res)
  error("kaboom") -- boom line
end)
"#;

const TEST: &str = r#"test("GET /items lists the seeded item", function()
  local r = test.get("/items")
  test.eq(r.status, 200)
  test.eq(r.json[1].name, "apple")
end)
"#;

/// An app: a route that reads a table, one that raises, a migration that
/// creates and seeds the table, and a test.
fn app() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "app.lua", APP);
    write(
        dir.path(),
        "migrations/001_items.sql",
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n\
         INSERT INTO items (name) VALUES ('apple');\n",
    );
    write(dir.path(), "tests/test_items.lua", TEST);
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The Python with the `mcp` package, or `None` (skipped) when absent.
fn python() -> Option<PathBuf> {
    let python = std::env::var_os("COVE_MCP_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            let home = std::env::var_os("HOME")?;
            Some(Path::new(&home).join(".cache/cove-mcp-venv/bin/python"))
        })?;
    let works = Command::new(&python)
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if works {
        return Some(python);
    }
    let reason = format!(
        "no Python with the mcp package at {} (python3 -m venv ~/.cache/cove-mcp-venv && \
         ~/.cache/cove-mcp-venv/bin/pip install mcp==2.3.0, or set COVE_MCP_PYTHON)",
        python.display()
    );
    assert!(
        std::env::var_os("COVE_REQUIRE_SERVICES").is_none(),
        "{reason} (and COVE_REQUIRE_SERVICES is set)"
    );
    eprintln!("skipped: {reason}");
    None
}

fn client_py() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py")
}

/// Run the client to completion; its JSON report.
fn run_client(cmd: Command) -> Value {
    let Exit { stdout, stderr, .. } = run_command(cmd);
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("client printed no JSON ({e}):\n{stdout}\nstderr:\n{stderr}"));
    assert!(report.get("fatal").is_none(), "{report}\nstderr:\n{stderr}");
    report
}

/// The keys of a JSON object, or the strings of an array.
fn names(v: &Value) -> Vec<&str> {
    match v {
        Value::Object(o) => o.keys().map(String::as_str).collect(),
        _ => v
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect(),
    }
}

/// `cove mcp APP flags…` over stdio, making `calls` in order.
fn stdio(python: &Path, app: &Path, calls: &Value, flags: &[&str]) -> Value {
    let mut cmd = Command::new(python);
    cmd.arg(client_py())
        .args(["stdio", bin(), s(app), &calls.to_string()])
        .args(flags);
    run_client(cmd)
}

/// The outcome of the `i`th call; panics unless `is_error` is `error`.
fn call(report: &Value, i: usize, error: bool) -> &Value {
    let c = &report["calls"][i];
    assert_eq!(c["is_error"], error, "call {i}: {c}");
    c
}

/// The app's `cove dev` (its own database, elsewhere), for `cove mcp` to
/// attach to through the dev.json it writes.
fn attached_server(app: &Path) -> Server {
    let server = Server::start(&app.join("app.lua"), &["dev"]);
    let dev: Value = serde_json::from_str(
        &std::fs::read_to_string(app.join(".cove/dev.json")).expect("dev.json"),
    )
    .expect("dev.json is JSON");
    assert_eq!(dev["port"], server.port);
    // A table only that database has: a session that reads another (the
    // app's data.db, the migrations in memory) does not see it.
    let db = s(server.db_path());
    let made = run(&[
        "db",
        "query",
        "--write",
        "CREATE TABLE only_in_dev (x)",
        "-d",
        db,
    ]);
    assert_eq!(made.code, Some(0), "{}", made.stdout);
    server
}

/// A stdio session on [`app`] attached to a dev server: the app, the server
/// and the report of `calls`; `None` when the Python SDK is missing. No
/// `-d`: the session reads the database dev.json names.
fn attached_session(calls: &Value) -> Option<(tempfile::TempDir, Server, Value)> {
    let python = python()?;
    let dir = app();
    let server = attached_server(dir.path());
    let report = stdio(&python, dir.path(), calls, &[]);
    Some((dir, server, report))
}

#[test]
fn tools_and_resources_over_stdio() {
    let calls = json!([
        { "name": "routes" },
        { "name": "schema" },
        { "name": "query", "arguments": { "sql": "SELECT id, name FROM items" } },
        { "name": "query", "arguments": { "sql": "DELETE FROM items" } },
        { "name": "request", "arguments": { "method": "GET", "path": "/items" } },
        { "name": "status" },
        { "name": "read:cove://app/app.lua" },
        { "name": "read:cove://docs/api/db.md" },
        { "name": "read:cove://app/.cove/dev.json" },
        { "name": "query", "arguments": { "sql": "SELEC nope" } },
    ]);
    let Some((_dir, server, r)) = attached_session(&calls) else {
        return;
    };

    let tools = names(&r["tools"]);
    for t in [
        "routes",
        "schema",
        "query",
        "request",
        "run_tests",
        "logs",
        "errors",
        "reload",
        "migrate",
        "status",
    ] {
        assert!(tools.contains(&t), "{t} missing from {tools:?}");
        assert!(
            r["tools"][t]["description"]
                .as_str()
                .is_some_and(|d| d.len() > 20),
            "{t}"
        );
    }
    let query_schema = &r["tools"]["query"]["input_schema"];
    assert_eq!(query_schema["required"], json!(["sql"]), "{query_schema}");
    let resources = names(&r["resources"]);
    for uri in [
        "cove://docs/api/db.md",
        "cove://app/app.lua",
        "cove://app/migrations/001_items.sql",
        "cove://app/tests/test_items.lua",
    ] {
        assert!(resources.contains(&uri), "{uri} missing from {resources:?}");
    }
    assert!(
        !resources
            .iter()
            .any(|u| u.contains(".cove/") || u.ends_with(".db")),
        "{resources:?}"
    );

    assert_eq!(
        call(&r, 0, false)["json"]["routes"],
        json!([{ "method": "GET", "pattern": "/items" }, { "method": "GET", "pattern": "/boom" }])
    );
    let tables = &call(&r, 1, false)["json"]["tables"];
    let items = tables
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "items")
        .expect("items table");
    assert!(
        tables
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "only_in_dev"),
        "{tables}"
    );
    assert_eq!(
        items["columns"][1],
        json!({ "name": "name", "type": "TEXT", "notnull": true })
    );
    assert_eq!(
        call(&r, 2, false)["json"],
        json!({ "columns": ["id", "name"], "rows": [[1, "apple"]], "count": 1 })
    );
    assert!(
        call(&r, 3, true)["text"]
            .as_str()
            .unwrap()
            .contains("--allow-writes"),
        "{}",
        r["calls"][3]
    );
    let response = &call(&r, 4, false)["json"];
    assert_eq!(response["status"], 200);
    assert_eq!(response["body"], json!([{ "id": 1, "name": "apple" }]));
    let status = &call(&r, 5, false)["json"];
    assert_eq!(status["running"], true);
    assert_eq!(status["started_by_mcp"], false);
    assert_eq!(status["dev"]["port"], server.port);
    assert_eq!(call(&r, 6, false)["text"], APP);
    assert!(call(&r, 7, false)["text"]
        .as_str()
        .unwrap()
        .contains("db.query"));
    call(&r, 8, true);
    assert!(
        call(&r, 9, true)["text"]
            .as_str()
            .unwrap()
            .contains("syntax error"),
        "{}",
        r["calls"][9]
    );
    // The row the refused DELETE would have removed is still there.
    assert_eq!(
        server.get("/items").json(),
        json!([{ "id": 1, "name": "apple" }])
    );
}

#[test]
fn streamable_http_with_allow_writes() {
    let Some(python) = python() else { return };
    let dir = app();
    let server = attached_server(dir.path());
    let entry = dir.path().join("app.lua");
    let mut mcp = Command::new(bin())
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--allow-writes",
            "-d",
            s(server.db_path()),
            // The entry file names the app directory too.
            s(&entry),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cove mcp");
    let stderr = mcp.stderr.take().unwrap();
    let _stop = KillOnDrop(mcp);
    let url = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.split("serving MCP at ").nth(1).map(str::to_string))
        .expect("cove mcp printed its URL");
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let calls = json!([
        { "name": "query", "arguments": { "sql": "INSERT INTO items (name) VALUES ('pear')" } },
        { "name": "request", "arguments": { "method": "GET", "path": "/items" } },
        { "name": "query", "arguments": { "sql": "DELETE FROM _hull_migrations" } },
        // Every other tool once over this transport too.
        { "name": "routes" },
        { "name": "schema" },
        { "name": "run_tests", "arguments": { "file": "test_items.lua" } },
        { "name": "logs", "arguments": { "lines": 5 } },
        { "name": "errors" },
        { "name": "reload" },
        { "name": "migrate" },
        { "name": "status" },
    ]);
    let mut cmd = Command::new(&python);
    cmd.arg(client_py())
        .args(["http", &url, &calls.to_string()]);
    let r = run_client(cmd);
    assert_eq!(r["tools"].as_object().unwrap().len(), 10, "{}", r["tools"]);
    call(&r, 0, false);
    assert_eq!(call(&r, 1, false)["json"]["body"][1]["name"], "pear");
    // Writes allowed, Cove's own tables stay the app's no-go area.
    let reserved = call(&r, 2, true)["text"].as_str().unwrap();
    assert!(
        reserved.contains("_hull_* tables are Cove's own"),
        "{reserved}"
    );
    let applied = run(&[
        "db",
        "query",
        "SELECT count(*) FROM _hull_migrations",
        "-d",
        s(server.db_path()),
    ]);
    assert!(
        applied.stdout.contains("\"rows\":[[1]]"),
        "{}",
        applied.stdout
    );
    assert_eq!(call(&r, 3, false)["json"]["routes"][0]["pattern"], "/items");
    assert!(call(&r, 4, false)["json"]["tables"].is_array());
    // Tests run on a database of their own: the pear is not there.
    let tests = &call(&r, 5, false)["json"];
    assert_eq!(tests["results"][0]["passed"], 1, "{tests}");
    assert!(call(&r, 6, false)["json"]["events"].is_array());
    assert!(call(&r, 7, false)["json"].is_object());
    assert_eq!(call(&r, 8, false)["json"]["result"]["event"], "reloaded");
    assert_eq!(call(&r, 9, false)["json"]["message"], "already up to date");
    assert_eq!(call(&r, 10, false)["json"]["dev"]["port"], server.port);

    let refused = Command::new(bin())
        .args(["mcp", "--http", "0.0.0.0:0", s(dir.path())])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("loopback only"));
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `cove test --json` in a child: all files, one file, an unknown file.
#[test]
fn run_tests_returns_json_results() {
    let calls = json!([
        { "name": "run_tests" },
        { "name": "run_tests", "arguments": { "file": "tests/test_items.lua" } },
        { "name": "run_tests", "arguments": { "file": "tests/test_nope.lua" } },
    ]);
    let Some((_dir, _server, r)) = attached_session(&calls) else {
        return;
    };
    for i in 0..2 {
        let out = &call(&r, i, false)["json"];
        assert_eq!(out["passed"], true, "{out}");
        let text = out["results"].to_string();
        assert!(text.contains("GET /items lists the seeded item"), "{text}");
    }
    let unknown = call(&r, 2, true)["text"].as_str().unwrap();
    assert!(unknown.contains("test_nope.lua"), "{unknown}");
}

/// Dev protocol: `cove mcp` starts `cove dev` itself (waiting for its
/// dev.json), a failing request's error names app.lua and its line in
/// `errors` and `logs`, `migrate` applies a migration written during the
/// session, and the dev server stops when the session ends.
#[test]
fn starts_dev_and_reports_errors_reloads_and_migrations() {
    let Some(python) = python() else { return };
    let dir = app();
    let boom_line = APP.lines().position(|l| l.contains("boom line")).unwrap() + 1;
    let migration = dir.path().join("migrations/002_tags.sql");
    let calls = json!([
        { "name": "status" },
        { "name": "request", "arguments": { "method": "GET", "path": "/boom" } },
        { "name": "errors" },
        { "name": "logs", "arguments": { "event": "started" } },
        { "name": "reload" },
        { "name": format!("write:{}", s(&migration)), "arguments": { "text": "CREATE TABLE tags (name TEXT);" } },
        { "name": "migrate" },
        { "name": "query", "arguments": { "sql": "SELECT count(*) AS n FROM tags" } },
        { "name": "migrate" },
    ]);
    let r = stdio(&python, dir.path(), &calls, &["-p", "0"]);

    let status = &call(&r, 0, false)["json"];
    assert_eq!(status["running"], true, "{status}");
    assert_eq!(status["started_by_mcp"], true);
    let pid = status["dev"]["pid"].as_u64().expect("dev.json pid");
    let boom = &call(&r, 1, false)["json"];
    assert_eq!(boom["status"], 500);
    assert_eq!(boom["error"]["event"], "request_error", "{boom}");
    let last = &call(&r, 2, false)["json"]["last_error"];
    assert_eq!(last["event"], "request_error", "{last}");
    assert_eq!(last["file"], "app.lua");
    assert_eq!(last["line"], boom_line);
    assert!(
        last["message"].as_str().unwrap().contains("kaboom"),
        "{last}"
    );
    let started = &call(&r, 3, false)["json"]["events"];
    assert_eq!(started.as_array().unwrap().len(), 1, "{started}");
    assert_eq!(started[0]["pid"], pid);
    let reload = &call(&r, 4, false)["json"];
    assert_eq!(reload["result"]["event"], "reloaded", "{reload}");
    assert_eq!(reload["result"]["requested"], true);
    // The watcher may see the new file first and apply it itself; either
    // way the table exists once `migrate` returns, and a second is a no-op.
    // ("write:" makes no entry in the report.)
    call(&r, 5, false);
    assert_eq!(call(&r, 6, false)["json"]["rows"], json!([[0]]));
    assert_eq!(call(&r, 7, false)["json"]["message"], "already up to date");

    // The session is over: the dev server started for it is gone.
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            start.elapsed() < TIMEOUT,
            "cove dev {pid} outlived the MCP session"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// Dev protocol: an app that does not load still gets a session; `errors`
/// and `reload` report the load error with file:line.
#[test]
fn a_broken_app_is_reported_with_file_and_line() {
    let Some(python) = python() else { return };
    let dir = app();
    write(dir.path(), "app.lua", "local ok = 1\nlocal x = = 1\n");
    let calls = json!([{ "name": "errors" }, { "name": "reload" }, { "name": "request", "arguments": { "method": "GET", "path": "/" } }]);
    let r = stdio(&python, dir.path(), &calls, &[]);
    let last = &call(&r, 0, false)["json"]["last_error"];
    assert_eq!(last["event"], "reload_failed", "{last}");
    assert_eq!(last["file"], "app.lua");
    assert_eq!(last["line"], 2);
    let reload = call(&r, 1, true)["text"].as_str().unwrap();
    assert!(reload.starts_with("app.lua:2: "), "{reload}");
    let request = call(&r, 2, true)["text"].as_str().unwrap();
    assert!(request.contains("`errors` tool"), "{request}");
}

/// A session killed outright (SIGKILL: no chance to stop anything) does not
/// leave the dev server it started running.
#[test]
fn the_dev_server_stops_with_a_killed_session() {
    let dir = app();
    let mut mcp = Command::new(bin())
        .args(["mcp", s(dir.path()), "-p", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn cove mcp");
    let dev_json = dir.path().join(".cove/dev.json");
    let start = Instant::now();
    let pid = loop {
        let read = std::fs::read_to_string(&dev_json).ok();
        if let Some(dev) = read.and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
            break dev["pid"].as_u64().expect("pid");
        }
        assert!(start.elapsed() < TIMEOUT, "cove mcp started no dev server");
        thread::sleep(Duration::from_millis(20));
    };
    mcp.kill().expect("SIGKILL cove mcp");
    mcp.wait().expect("reap cove mcp");
    // Gone, or a zombie its new parent has yet to reap.
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    };
    while alive() {
        assert!(
            start.elapsed() < TIMEOUT,
            "cove dev {pid} outlived its killed session"
        );
        thread::sleep(Duration::from_millis(20));
    }
    // It stopped cleanly: no dev.json left to mislead `cove status`.
    assert!(!dev_json.exists());
}
