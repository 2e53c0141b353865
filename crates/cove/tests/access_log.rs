//! `--access-log`: one line per request, JSON or combined, with the request
//! id (the client's `X-Request-ID` or one made), the
//! route pattern, status, bytes, duration and worker; reopened on SIGUSR1;
//! every answered request's line written by a clean stop.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{bin, both, Lang, Server};

const LUA_APP: &str = r#"
app.get("/tasks/:id", function(req, res) res:json({ id = req.params.id }) end)
app.post("/tasks", function(req, res) res:status(201):json({ ok = true }) end)
"#;

const JS_APP: &str = r#"
import { app } from "hull:app";
app.get("/tasks/:id", (req, res) => res.json({ id: req.params.id }));
app.post("/tasks", (req, res) => res.status(201).json({ ok: true }));
"#;

fn write_app(dir: &Path, lang: Lang) -> std::path::PathBuf {
    let app = dir.join(format!("app.{}", lang.ext()));
    let src = match lang {
        Lang::Lua => LUA_APP,
        Lang::Js => JS_APP,
    };
    std::fs::write(&app, src).unwrap();
    app
}

/// The file's lines once it has `n` of them (the writer flushes every
/// 100 ms; this waits up to 10 s).
fn lines(path: &Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let got: Vec<String> = text.lines().map(str::to_string).collect();
        if got.len() >= n || Instant::now() > deadline {
            assert_eq!(got.len(), n, "{text}");
            return got;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn json_lines(lang: Lang) {
    let dir = tempfile::tempdir().unwrap();
    let app = write_app(dir.path(), lang);
    let log = dir.path().join("access.log");
    let log_s = log.to_str().unwrap();
    let s = Server::start(
        &app,
        &["--access-log", log_s, "--access-log-format", "json"],
    );
    let r = s.request(
        "GET",
        "/tasks/7?full=1",
        &[
            ("X-Request-ID", "client-id-42"),
            ("Referer", "https://example.com/\"q\""),
            ("User-Agent", "tester/1.0 ünï"),
        ],
        None,
    );
    assert_eq!(r.status, 200);
    // The id is logged, not sent back.
    assert_eq!(r.header("x-request-id"), None);
    assert_eq!(s.get("/nope").status, 404);
    assert_eq!(s.get("/nope").status, 404);
    // A client id with a space is not taken: one is made.
    let r = s.request("POST", "/tasks", &[("X-Request-ID", "bad id")], Some(b"{}"));
    assert_eq!(r.status, 201);

    // Two workers: lines from each come in their own order.
    let got: Vec<Value> = lines(&log, 4)
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let made: Vec<&str> = got
        .iter()
        .filter(|v| v["path"] == "/nope")
        .map(|v| v["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(made.len(), 2);
    assert_ne!(made[0], made[1], "each request gets its own id");
    assert!(made.iter().all(|id| id.len() == 24), "{made:?}");
    let by_id = |id: &str| {
        got.iter()
            .find(|v| v["request_id"] == id)
            .unwrap_or_else(|| panic!("no line with request_id {id}: {got:?}"))
    };
    let first = by_id("client-id-42");
    assert_eq!(first["method"], "GET");
    assert_eq!(first["path"], "/tasks/7");
    assert_eq!(first["query"], "full=1");
    assert_eq!(first["proto"], "HTTP/1.1");
    assert_eq!(first["status"], 200);
    assert_eq!(first["bytes"], r#"{"id":"7"}"#.len());
    assert_eq!(first["route"], "/tasks/:id");
    assert_eq!(first["remote"], "127.0.0.1");
    assert_eq!(first["referer"], "https://example.com/\"q\"");
    assert_eq!(first["user_agent"], "tester/1.0 ünï");
    assert!(first["duration_ms"].as_f64().unwrap() >= 0.0);
    assert!(first["worker"].as_u64().is_some());
    assert!(first["time"].as_str().unwrap().ends_with('Z'));
    let missing = by_id(made[0]);
    assert_eq!(missing["route"], Value::Null);
    assert_eq!(missing["status"], 404);
    assert_eq!(missing["query"], Value::Null);
    let post = got.iter().find(|v| v["method"] == "POST").unwrap();
    assert_eq!(post["route"], "/tasks");
    assert_eq!(post["status"], 201);
    assert_ne!(post["request_id"], "bad id");
}

both!(json_lines);

#[test]
fn combined_lines_keep_the_combined_format_and_add_cove_fields() {
    let dir = tempfile::tempdir().unwrap();
    let app = write_app(dir.path(), Lang::Lua);
    let log = dir.path().join("access.log");
    let s = Server::start(&app, &["--access-log", log.to_str().unwrap()]);
    let r = s.request(
        "GET",
        "/tasks/1",
        &[("User-Agent", "curl-ish"), ("X-Request-ID", "r1")],
        None,
    );
    assert_eq!(r.status, 200);
    let line = &lines(&log, 1)[0];
    // 127.0.0.1 - - [28/Nov/2026:06:10:00 +0000] "GET /tasks/1 HTTP/1.1" 200 10 "-" "curl-ish" rid=r1 ...
    assert!(line.starts_with("127.0.0.1 - - ["), "{line}");
    let (_, rest) = line.split_once("] ").unwrap();
    assert!(
        rest.starts_with(
            r#""GET /tasks/1 HTTP/1.1" 200 10 "-" "curl-ish" rid=r1 route=/tasks/:id dur_ms="#
        ),
        "{line}"
    );
    assert!(line.contains(" +0000] "), "{line}");
}

#[test]
fn sigusr1_reopens_the_file_after_a_rename() {
    let dir = tempfile::tempdir().unwrap();
    let app = write_app(dir.path(), Lang::Lua);
    let log = dir.path().join("access.log");
    let mut s = Server::start(
        &app,
        &[
            "--access-log",
            log.to_str().unwrap(),
            "--access-log-format",
            "json",
        ],
    );
    assert_eq!(s.get("/tasks/1").status, 200);
    lines(&log, 1);
    let rotated = dir.path().join("access.log.1");
    std::fs::rename(&log, &rotated).unwrap();
    s.signal(libc::SIGUSR1);
    // The reopen is asynchronous: requests go on until the new file has
    // lines; the old one keeps exactly what it had, and nothing is lost.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut sent = 0;
    while !log.exists() || std::fs::read_to_string(&log).unwrap().is_empty() {
        assert!(Instant::now() < deadline, "no new file after SIGUSR1");
        assert_eq!(s.get("/tasks/2").status, 200);
        sent += 1;
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(s.log().contains("listening"));
    // The last request's line may still wait in its worker's buffer (the
    // writer takes them every 100 ms): a clean stop writes it.
    s.signal(libc::SIGTERM);
    assert!(s.wait_exit().success());
    let old = std::fs::read_to_string(&rotated).unwrap().lines().count();
    let new = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(old + new, 1 + sent, "every line in one of the two files");
}

#[test]
fn a_clean_stop_writes_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let app = write_app(dir.path(), Lang::Lua);
    let log = dir.path().join("access.log");
    let mut s = Server::start(&app, &["--access-log", log.to_str().unwrap()]);
    for i in 0..200 {
        assert_eq!(s.get(&format!("/tasks/{i}")).status, 200);
    }
    s.signal(libc::SIGTERM);
    assert!(s.wait_exit().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.lines().count(), 200, "{text}");
}

#[test]
fn stdout_gets_the_lines() {
    let dir = tempfile::tempdir().unwrap();
    let app = write_app(dir.path(), Lang::Lua);
    let mut child = Command::new(bin())
        .args([
            "--access-log",
            "stdout",
            "--access-log-format",
            "json",
            "-p",
            "0",
        ])
        .args(["-d", dir.path().join("d.db").to_str().unwrap()])
        .arg(&app)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The port from the startup line on stderr.
    let mut err = child.stderr.take().unwrap();
    let mut seen = String::new();
    let port = loop {
        let mut buf = [0u8; 512];
        let n = err.read(&mut buf).unwrap();
        assert!(n > 0, "cove exited: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        if let Some(rest) = seen.split("listening on http://").nth(1) {
            if let Some(addr) = rest.split_whitespace().next() {
                break addr.rsplit(':').next().unwrap().parse::<u16>().unwrap();
            }
        }
    };
    let r = crate::util::Conn::open(port).request("GET", "/tasks/3", &[], None);
    assert_eq!(r.status, 200);
    terminate(child.id());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child.wait().unwrap();
    let line: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["route"], "/tasks/:id");
    assert_eq!(line["status"], 200);
}

/// SIGTERM to `pid`.
fn terminate(pid: u32) {
    let status = Command::new("kill").arg(pid.to_string()).status().unwrap();
    assert!(status.success());
}
