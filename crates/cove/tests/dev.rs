//! `cove dev`: edits are served without closing the port, a broken edit
//! keeps the last good version serving, new migrations are applied.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{bin, write_file as write, Conn, Server, TIMEOUT};

/// How long a reload may take to show; generous for a loaded 2-core machine.
const RELOAD: Duration = Duration::from_secs(20);

const LUA_APP: &str = r#"local lib = require("./lib")
app.get("/v", function(req, res) res:json({ app = "one", lib = lib.name }) end)
app.get("/notes", function(req, res) res:json(db.query("SELECT body FROM notes")) end)
"#;

/// A Lua app in a temporary directory: app.lua, lib.lua, one migration.
fn lua_app() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "app.lua", LUA_APP);
    write(dir.path(), "lib.lua", r#"return { name = "lib-one" }"#);
    write(
        dir.path(),
        "migrations/001_init.sql",
        "CREATE TABLE visits (id INTEGER PRIMARY KEY);",
    );
    dir
}

fn dev(app: &Path) -> Server {
    Server::start(app, &["dev"])
}

/// Poll `get` until `want(response)` holds; panics with the log after `RELOAD`.
fn until(s: &Server, path: &str, want: impl Fn(u16, &str) -> bool) -> String {
    let start = Instant::now();
    loop {
        let r = s.get(path);
        let body = r.text();
        if want(r.status, &body) {
            return body;
        }
        assert!(
            start.elapsed() < RELOAD,
            "GET {path} still {} {body}\n{}",
            r.status,
            s.log()
        );
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_edit_is_served_on_the_same_port_without_refusing_connections() {
    let dir = lua_app();
    let s = dev(dir.path());
    assert!(s.get("/v").text().contains(r#""app":"one""#));
    assert!(s.log().contains("dev mode: watching"), "{}", s.log());

    // One client opens a connection per request, the other keeps one open:
    // both must always get an answer, and the kept one must see the edit too.
    let stop = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let fresh = {
        let (stop, failures, port) = (stop.clone(), failures.clone(), s.port);
        thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let outcome =
                    Conn::try_open(port).and_then(|mut c| c.try_request("GET", "/v", &[], None));
                match outcome {
                    Ok(r) if r.status == 200 => {}
                    Ok(r) => failures
                        .lock()
                        .unwrap()
                        .push(format!("{} {}", r.status, r.text())),
                    Err(e) => failures.lock().unwrap().push(e.to_string()),
                }
            }
        })
    };
    let kept = {
        let (failures, port) = (failures.clone(), s.port);
        thread::spawn(move || {
            let mut conn = Conn::open(port);
            let start = Instant::now();
            while start.elapsed() < RELOAD {
                match conn.try_request("GET", "/v", &[], None) {
                    Ok(r) if r.text().contains(r#""app":"two""#) => return true,
                    Ok(_) => thread::sleep(Duration::from_millis(20)),
                    Err(e) => {
                        failures
                            .lock()
                            .unwrap()
                            .push(format!("kept connection: {e}"));
                        return false;
                    }
                }
            }
            false
        })
    };

    write(
        dir.path(),
        "app.lua",
        &LUA_APP.replace(r#""one""#, r#""two""#),
    );
    until(&s, "/v", |_, body| body.contains(r#""app":"two""#));
    assert!(
        kept.join().unwrap(),
        "the kept-alive connection never saw the edit"
    );
    stop.store(true, Ordering::SeqCst);
    fresh.join().unwrap();
    let failures = failures.lock().unwrap();
    assert!(failures.is_empty(), "{failures:?}\n{}", s.log());
    let log = s.wait_for_log("reloaded (1 file changed: app.lua)");
    assert_eq!(log.matches("listening on").count(), 1, "bound once: {log}");
}

#[test]
fn a_broken_edit_keeps_the_last_good_version_serving() {
    let dir = lua_app();
    let s = dev(dir.path());
    let broken = LUA_APP.replace(
        r#"res:json(db.query("SELECT body FROM notes"))"#,
        "res:json({ oops = })",
    );
    write(dir.path(), "app.lua", &broken);
    let log = s.wait_for_log("app.lua:3:");
    assert!(log.contains("still serving the previous version"), "{log}");
    assert!(s.get("/v").text().contains(r#""app":"one""#));

    // A runtime error while loading counts as broken too.
    write(dir.path(), "app.lua", "local x = nil\nx.field = 1\n");
    s.wait_for_log("app.lua:2:");
    assert!(s.get("/v").text().contains(r#""app":"one""#));

    write(
        dir.path(),
        "app.lua",
        &LUA_APP.replace(r#""one""#, r#""fixed""#),
    );
    until(&s, "/v", |_, body| body.contains(r#""app":"fixed""#));
}

#[test]
fn a_new_migration_is_applied_on_reload() {
    let dir = lua_app();
    let s = dev(dir.path());
    assert_eq!(s.get("/notes").status, 500, "no notes table yet");
    write(
        dir.path(),
        "migrations/002_notes.sql",
        "CREATE TABLE notes (body TEXT);\nINSERT INTO notes (body) VALUES ('first');",
    );
    let body = until(&s, "/notes", |status, _| status == 200);
    assert_eq!(body, r#"[{"body":"first"}]"#);
    s.wait_for_log("migration applied: 002_notes.sql");

    // A broken migration is reported with its name and reloads nothing.
    write(dir.path(), "migrations/003_bad.sql", "CREATE TABLE;");
    let log = s.wait_for_log("003_bad.sql");
    assert!(log.contains("still serving the previous version"), "{log}");
    assert_eq!(s.get("/notes").status, 200);
}

#[test]
fn editing_a_required_module_reloads() {
    let dir = lua_app();
    let s = dev(dir.path());
    assert!(s.get("/v").text().contains("lib-one"));
    write(dir.path(), "lib.lua", r#"return { name = "lib-two" }"#);
    until(&s, "/v", |_, body| body.contains("lib-two"));
    s.wait_for_log("reloaded (1 file changed: lib.lua)");
}

#[test]
fn a_javascript_app_reloads_its_entry_and_its_imports() {
    let dir = tempfile::tempdir().unwrap();
    let app_js = r#"import { app } from "hull:app";
import { name } from "./lib.js";
app.get("/v", (req, res) => res.json({ app: "one", lib: name }));
"#;
    write(dir.path(), "app.js", app_js);
    write(dir.path(), "lib.js", r#"export const name = "lib-one";"#);
    let s = dev(dir.path());
    assert_eq!(s.get("/v").text(), r#"{"app":"one","lib":"lib-one"}"#);

    write(dir.path(), "lib.js", r#"export const name = "lib-two";"#);
    until(&s, "/v", |_, body| body.contains("lib-two"));

    write(
        dir.path(),
        "app.js",
        &app_js.replace("res.json({", "res.json({{"),
    );
    s.wait_for_log("app.js:3: SyntaxError");
    assert_eq!(s.get("/v").text(), r#"{"app":"one","lib":"lib-two"}"#);

    write(
        dir.path(),
        "app.js",
        &app_js.replace(r#""one""#, r#""two""#),
    );
    until(&s, "/v", |_, body| {
        body == r#"{"app":"two","lib":"lib-two"}"#
    });
}

#[test]
fn sigterm_stops_dev_mode_cleanly() {
    let dir = lua_app();
    let mut s = dev(dir.path());
    assert_eq!(s.get("/v").status, 200);
    s.signal(libc::SIGTERM);
    assert_eq!(s.wait_exit().code(), Some(0), "{}", s.log());
    assert!(s.log().contains("server stopped"), "{}", s.log());
}

/// `cove dev -d data.db` run inside the app directory, the usual way to use
/// it: the database and its WAL live among the watched files.
struct InPlace {
    child: Child,
    log: Arc<Mutex<String>>,
}

impl InPlace {
    fn start(dir: &Path) -> InPlace {
        let mut child = Command::new(bin())
            .args(["dev", "-p", "0", "-d", "data.db", "--workers", "1"])
            .current_dir(dir)
            .env_remove("HULL_MAX_INSTRUCTIONS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cove dev");
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        let stderr = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        InPlace { child, log }
    }

    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let log = self.log.lock().unwrap().clone();
            if log.contains(needle) {
                return log;
            }
            assert!(start.elapsed() < TIMEOUT, "no {needle:?} in:\n{log}");
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn port(&self) -> u16 {
        let log = self.wait_for("listening on http://");
        let rest = log.split("listening on http://").nth(1).unwrap();
        let addr = rest.split_whitespace().next().unwrap();
        addr.rsplit(':').next().unwrap().parse().unwrap()
    }
}

impl Drop for InPlace {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_broken_app_at_start_is_reported_and_served_once_fixed() {
    let dir = lua_app();
    write(
        dir.path(),
        "app.lua",
        "app.get(\"/v\", function(req, res)\n",
    );
    let s = InPlace::start(dir.path());
    s.wait_for("app.lua:");
    assert!(!s.log.lock().unwrap().contains("listening on"));
    write(dir.path(), "app.lua", LUA_APP);
    let port = s.port();
    let r = Conn::open(port).request("GET", "/v", &[], None);
    assert!(r.text().contains(r#""app":"one""#));
}

#[test]
fn writes_to_a_database_inside_the_app_directory_do_not_reload() {
    let dir = lua_app();
    write(
        dir.path(),
        "app.lua",
        &format!(
            "{LUA_APP}app.post(\"/visit\", function(req, res)\n  \
             db.exec(\"INSERT INTO visits DEFAULT VALUES\")\n  res:json({{ ok = true }})\nend)\n"
        ),
    );
    let s = InPlace::start(dir.path());
    let port = s.port();
    let mut conn = Conn::open(port);
    for _ in 0..20 {
        assert_eq!(conn.request("POST", "/visit", &[], None).status, 200);
        thread::sleep(Duration::from_millis(25));
    }
    assert!(dir.path().join("data.db").exists());
    // Had the database files counted as changes, the first reload would have
    // come earlier or named them.
    write(dir.path(), "lib.lua", r#"return { name = "lib-two" }"#);
    let log = s.wait_for("reloaded (");
    let first = log.lines().find(|l| l.contains("reloaded (")).unwrap();
    assert!(
        first.ends_with("reloaded (1 file changed: lib.lua)"),
        "{log}"
    );
}
