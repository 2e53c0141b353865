//! `cove dev --agent`'s events, the `.cove/` record behind `cove status` and
//! `cove errors`, and `cove agent …` (docs/agents.md).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::util::{bin, both, send_signal, write_file as write, Conn, Lang, TIMEOUT};

const LUA: &str = r#"app.get("/", function(req, res) res:json({ ok = true }) end)
app.get("/boom", function(req, res)
  local x = nil
  return x.y
end)
"#;

const JS: &str = r#"import { app } from "hull:app";
app.get("/", (req, res) => res.json({ ok: true }));
app.get("/boom", (req, res) => {
  const x = null;
  return x.y;
});
"#;

/// The line `/boom` fails on.
fn boom_line(lang: Lang) -> u64 {
    match lang {
        Lang::Lua => 4,
        Lang::Js => 5,
    }
}

fn app(lang: Lang) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = match lang {
        Lang::Lua => LUA,
        Lang::Js => JS,
    };
    write(dir.path(), &format!("app.{}", lang.ext()), source);
    write(
        dir.path(),
        "migrations/001_init.sql",
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",
    );
    dir
}

/// `cove <args>` in `dir`: its stdout as JSON, and its exit code.
fn cove_json(dir: &Path, args: &[&str]) -> (Json, i32) {
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run cove");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    let value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {stdout:?}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (value, out.status.code().unwrap_or(-1))
}

/// `cove dev --agent` to run in the app directory `dir`.
fn dev_agent(dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args([
        "dev",
        "--agent",
        "-p",
        "0",
        "-d",
        "dev.db",
        "--workers",
        "1",
    ])
    .current_dir(dir);
    cmd
}

/// `cove dev --agent` in the app directory, its stdout read as events.
struct Dev {
    child: Child,
    events: Arc<Mutex<Vec<Json>>>,
}

impl Dev {
    fn start(dir: &Path) -> Dev {
        let mut child = dev_agent(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn cove dev");
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = events.clone();
        let stdout = child.stdout.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let event = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                sink.lock().unwrap().push(event);
            }
        });
        Dev { child, events }
    }

    /// The `n`th (from 1) event named `name`, waiting for it.
    fn nth(&self, name: &str, n: usize) -> Json {
        let start = Instant::now();
        loop {
            let events = self.events.lock().unwrap().clone();
            if let Some(e) = events.iter().filter(|e| e["event"] == name).nth(n - 1) {
                return e.clone();
            }
            assert!(start.elapsed() < TIMEOUT, "no {name} #{n} in {events:#?}");
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn port(&self) -> u16 {
        self.nth("started", 1)["port"].as_u64().unwrap() as u16
    }

    /// SIGTERM, and wait for the exit.
    fn stop(mut self) {
        send_signal(self.child.id() as i32, libc::SIGTERM);
        let _ = self.child.wait();
        // The reader thread has the last lines once stdout closes.
        thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

both!(a_failed_request_is_an_event_and_the_last_error);

fn a_failed_request_is_an_event_and_the_last_error(lang: Lang) {
    let dir = app(lang);
    let dev = Dev::start(dir.path());
    let started = dev.nth("started", 1);
    assert_eq!(started["runtime"], lang.ext());
    assert_eq!(started["entry"], format!("app.{}", lang.ext()));
    assert_eq!(dev.nth("migrated", 1)["applied"], json!(["001_init.sql"]));
    let (errors, code) = cove_json(dir.path(), &["errors"]);
    assert_eq!((errors, code), (json!({ "errors": [] }), 0));

    let res = Conn::open(dev.port()).request("GET", "/boom", &[], None);
    assert_eq!(res.status, 500);
    let failed = dev.nth("request_error", 1);
    assert_eq!(failed["method"], "GET");
    assert_eq!(failed["path"], "/boom");
    assert_eq!(failed["status"], 500);
    assert_eq!(failed["file"], format!("app.{}", lang.ext()));
    assert_eq!(failed["line"], boom_line(lang));
    assert!(
        failed["message"].as_str().unwrap().contains("null")
            || failed["message"].as_str().unwrap().contains("nil"),
        "{failed}"
    );

    let (last, _) = cove_json(dir.path(), &["errors"]);
    assert_eq!(last["event"], "request_error");
    assert_eq!(last["line"], boom_line(lang));
    assert!(last["timestamp"].is_u64());
    // Hull's spelling prints the same.
    assert_eq!(cove_json(dir.path(), &["agent", "errors"]).0, last);
}

#[test]
fn reloads_and_their_failures_are_events() {
    let dir = app(Lang::Lua);
    let dev = Dev::start(dir.path());
    dev.port();
    write(
        dir.path(),
        "app.lua",
        &format!("{LUA}app.get(\"/x\", function(req, res)\n"),
    );
    let failed = dev.nth("reload_failed", 1);
    assert_eq!(failed["file"], "app.lua");
    assert_eq!(failed["line"], 7);
    assert_eq!(failed["initial"], false);
    assert_eq!(
        cove_json(dir.path(), &["errors"]).0["event"],
        "reload_failed"
    );

    write(dir.path(), "app.lua", LUA);
    assert_eq!(dev.nth("reloaded", 1)["files"], json!(["app.lua"]));
    // A good load clears the last error.
    assert_eq!(
        cove_json(dir.path(), &["errors"]).0,
        json!({ "errors": [] })
    );

    // A reload asked for through .cove/reload applies a new migration first.
    write(
        dir.path(),
        "migrations/002_tags.sql",
        "CREATE TABLE tags (name TEXT);",
    );
    dev.nth("reloaded", 2);
    assert_eq!(dev.nth("migrated", 2)["applied"], json!(["002_tags.sql"]));
    write(dir.path(), ".cove/reload", "");
    let requested = dev.nth("reloaded", 3);
    assert_eq!(requested["requested"], true);
    assert_eq!(requested["files"], json!([]));
    assert!(!dir.path().join(".cove/reload").exists());
}

#[test]
fn status_follows_the_dev_server() {
    let dir = app(Lang::Lua);
    let dev = Dev::start(dir.path());
    let port = dev.port();
    for args in [&["status"][..], &["agent", "status"]] {
        let (status, code) = cove_json(dir.path(), args);
        assert_eq!(code, 0);
        assert_eq!(status["running"], true, "{status}");
        assert_eq!(status["port"], port);
        assert_eq!(status["pid"], dev.child.id());
        assert_eq!(status["runtime"], "lua");
    }
    // An app file given names its directory.
    let (status, _) = cove_json(dir.path(), &["status", "app.lua"]);
    assert_eq!(status["port"], port);
    dev.stop();
    assert!(!dir.path().join(".cove/dev.json").exists());
    let (status, code) = cove_json(dir.path(), &["status", "-p", &port.to_string()]);
    assert_eq!(
        (status, code),
        (json!({ "running": false, "port": port }), 0)
    );
}

#[test]
fn app_logs_are_events_and_stop_is_the_last() {
    let dir = app(Lang::Lua);
    write(
        dir.path(),
        "app.lua",
        &format!("log.info(\"hello from the app\")\n{LUA}"),
    );
    let dev = Dev::start(dir.path());
    dev.port();
    let events = dev.events.clone();
    dev.stop();
    let events = events.lock().unwrap().clone();
    assert!(
        events.iter().any(|e| e["event"] == "log"
            && e["source"] == "app"
            && e["level"] == "info"
            && e["message"] == "hello from the app"),
        "{events:#?}"
    );
    assert_eq!(events.iter().filter(|e| e["event"] == "stopped").count(), 1);
    // The file keeps what stdout showed.
    let file = std::fs::read_to_string(dir.path().join(".cove/events.jsonl")).unwrap();
    assert_eq!(file.lines().count(), events.len());
    assert!(events.iter().all(|e| e["time"].is_u64()));
}

#[test]
fn events_redirected_into_the_app_directory_do_not_reload_it() {
    let dir = app(Lang::Lua);
    let out = std::fs::File::create(dir.path().join("events.log")).unwrap();
    let mut child = dev_agent(dir.path())
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn cove dev");
    let log = dir.path().join("events.log");
    let start = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap()
        .contains("\"started\"")
    {
        assert!(start.elapsed() < TIMEOUT, "never started");
        thread::sleep(Duration::from_millis(10));
    }
    // Several polls of the watcher (250 ms each).
    thread::sleep(Duration::from_millis(1200));
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("\"reloaded\""), "{text}");
}

#[test]
fn agent_routes_and_db_print_hull_shapes() {
    let dir = app(Lang::Lua);
    let (routes, code) = cove_json(dir.path(), &["agent", "routes"]);
    assert_eq!(code, 0);
    assert_eq!(routes["runtime"], "lua");
    assert_eq!(
        routes["routes"][1],
        json!({ "method": "GET", "pattern": "/boom" })
    );
    let (schema, _) = cove_json(dir.path(), &["agent", "db", "schema"]);
    let tables = schema["tables"].as_array().unwrap();
    let notes = tables.iter().find(|t| t["name"] == "notes").expect("notes");
    assert_eq!(
        notes["columns"][0],
        json!({ "name": "id", "type": "INTEGER", "pk": true })
    );
    let (rows, _) = cove_json(dir.path(), &["agent", "db", "query", "SELECT 1 AS one"]);
    assert_eq!(
        rows,
        json!({ "columns": ["one"], "rows": [[1]], "count": 1 })
    );
}

#[test]
fn a_second_dev_server_for_the_app_is_refused() {
    let dir = app(Lang::Lua);
    let first = Dev::start(dir.path());
    let port = first.port();
    let second = dev_agent(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("run a second cove dev");
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains("already running for") && stderr.contains(&port.to_string()),
        "{stderr}"
    );
    // The first one's record is untouched.
    assert_eq!(cove_json(dir.path(), &["status"]).0["port"], port);
    assert_eq!(first.nth("started", 1)["port"], port);
}
