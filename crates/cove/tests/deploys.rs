//! Deploys without dropped requests (docs/operations.md, "Deploys"): SIGHUP
//! reloads the app in place, a new process takes the listening sockets over
//! from the running one (`--takeover`), and systemd's socket activation
//! (`LISTEN_FDS`). wrk runs through each deploy and must see no failure.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{bin, Conn, Lang, Server, TIMEOUT};

fn app_text(lang: Lang, version: &str) -> String {
    match lang {
        Lang::Lua => {
            format!("app.get(\"/\", function(req, res) res:json({{ v = \"{version}\" }}) end)\n")
        }
        Lang::Js => format!(
            "import {{ app }} from \"hull:app\";\n\
             app.get(\"/\", (req, res) => res.json({{ v: \"{version}\" }}));\n"
        ),
    }
}

/// A one-route app answering `{"v": version}`, in a temporary directory.
fn app(lang: Lang, version: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let entry = dir.path().join(format!("app.{}", lang.ext()));
    std::fs::write(&entry, app_text(lang, version)).unwrap();
    (dir, entry)
}

fn version(port: u16) -> String {
    let r = Conn::open(port).request("GET", "/", &[], None);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["v"].as_str().expect("v").to_string()
}

/// What wrk saw: requests, socket errors (connect, read, write, timeout)
/// and non-2xx/3xx answers.
#[derive(Debug)]
struct Load {
    requests: u64,
    socket_errors: u64,
    non_2xx: u64,
    output: String,
}

/// Run wrk against `port` for `secs` seconds on a thread of its own.
fn wrk(port: u16, secs: u32) -> thread::JoinHandle<Load> {
    thread::spawn(move || {
        let out = Command::new("wrk")
            .args([
                "-t1",
                "-c20",
                &format!("-d{secs}s"),
                &format!("http://127.0.0.1:{port}/"),
            ])
            .output()
            .expect("wrk (apt-get install wrk)");
        let output = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "wrk failed: {output}");
        parse_wrk(&output)
    })
}

fn parse_wrk(output: &str) -> Load {
    let mut load = Load {
        requests: 0,
        socket_errors: 0,
        non_2xx: 0,
        output: output.to_string(),
    };
    for line in output.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("Socket errors:") {
            // "connect 0, read 1, write 0, timeout 0"
            load.socket_errors = rest
                .split(',')
                .filter_map(|part| part.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
        } else if let Some(rest) = line.strip_prefix("Non-2xx or 3xx responses:") {
            load.non_2xx = rest.trim().parse().unwrap_or(u64::MAX);
        } else if line.contains("requests in") {
            load.requests = line
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
        }
    }
    load
}

fn assert_clean(load: &Load, log: &str) {
    assert!(
        load.requests > 100,
        "too few requests: {}\n{log}",
        load.output
    );
    assert_eq!(
        (load.socket_errors, load.non_2xx),
        (0, 0),
        "wrk saw failures:\n{}\n{log}",
        load.output
    );
}

#[test]
fn wrk_output_is_read() {
    let load = parse_wrk(
        "  1000 requests in 4.00s, 1.2MB read\n  Socket errors: connect 0, read 2, write 1, timeout 0\n  Non-2xx or 3xx responses: 3\n",
    );
    assert_eq!(
        (load.requests, load.socket_errors, load.non_2xx),
        (1000, 3, 3)
    );
}

fn sighup_reloads_under_load(lang: Lang) {
    let (dir, entry) = app(lang, "v1");
    let s = Server::start(&entry, &["--workers", "2"]);
    assert_eq!(version(s.port), "v1");
    let load = wrk(s.port, 4);
    thread::sleep(Duration::from_millis(1000));
    std::fs::write(&entry, app_text(lang, "v2")).unwrap();
    s.signal(libc::SIGHUP);
    s.wait_for_log("reloaded the app on every worker");
    // Every worker switched: every new request gets the new version.
    for _ in 0..10 {
        assert_eq!(version(s.port), "v2", "{}", s.log());
    }
    let load = load.join().expect("wrk thread");
    assert_clean(&load, &s.log());
    drop(dir);
}

#[test]
fn sighup_reloads_the_app_under_load_lua() {
    sighup_reloads_under_load(Lang::Lua);
}

#[test]
fn sighup_reloads_the_app_under_load_js() {
    sighup_reloads_under_load(Lang::Js);
}

fn broken_reload_keeps_the_old_version(lang: Lang) {
    let (_dir, entry) = app(lang, "v1");
    let s = Server::start(&entry, &["--workers", "2"]);
    let broken = match lang {
        Lang::Lua => "app.get(\"/\", function(req, res)\n  res:json({ v = ) end)\n",
        Lang::Js => {
            "import { app } from \"hull:app\";\napp.get(\"/\", (req, res) => res.json({ v: ));\n"
        }
    };
    std::fs::write(&entry, broken).unwrap();
    s.signal(libc::SIGHUP);
    let log = s.wait_for_log("reload failed");
    let file = format!("app.{}:2", lang.ext());
    let line = log
        .lines()
        .find(|l| l.contains("reload failed"))
        .expect("the line");
    assert!(line.contains(&file), "no {file} in: {line}");
    assert!(
        line.contains("still serving the previous version"),
        "{line}"
    );
    assert_eq!(version(s.port), "v1");
    // Fixed and signalled again: the new version.
    std::fs::write(&entry, app_text(lang, "v2")).unwrap();
    s.signal(libc::SIGHUP);
    s.wait_for_log("reloaded the app on every worker");
    assert_eq!(version(s.port), "v2");
}

#[test]
fn a_broken_app_on_sighup_keeps_the_old_version_lua() {
    broken_reload_keeps_the_old_version(Lang::Lua);
}

#[test]
fn a_broken_app_on_sighup_keeps_the_old_version_js() {
    broken_reload_keeps_the_old_version(Lang::Js);
}

/// Start a process taking over from the takeover socket `sock`, on the database `db`.
fn take_over(entry: &Path, db: &Path, sock: &Path) -> Server {
    Server::try_start_on(
        entry,
        db.to_str().unwrap(),
        &["--workers", "2", "--takeover", sock.to_str().unwrap()],
    )
    .unwrap_or_else(|log| panic!("the new process did not start:\n{log}"))
}

/// A two-worker server of `entry` that hands its sockets over at
/// `dir/takeover.sock`, once it says so; the socket's path and the server.
fn serving_takeovers(dir: &tempfile::TempDir, entry: &Path) -> (PathBuf, Server) {
    let sock = dir.path().join("takeover.sock");
    let args = [
        "--workers",
        "2",
        "--takeover-socket",
        sock.to_str().unwrap(),
    ];
    let server = Server::start(entry, &args);
    server.wait_for_log("can take over with --takeover");
    (sock, server)
}

fn takeover_under_load(lang: Lang) {
    let (dir, entry) = app(lang, "v1");
    let (sock, mut old) = serving_takeovers(&dir, &entry);
    let port = old.port;
    let load = wrk(port, 4);
    thread::sleep(Duration::from_millis(1000));
    std::fs::write(&entry, app_text(lang, "v2")).unwrap();
    let mut new = take_over(&entry, old.db_path(), &sock);
    assert_eq!(new.port, port, "{}", new.log());
    let status = old.wait_exit();
    assert_eq!(status.code(), Some(0), "{}", old.log());
    assert!(
        old.log().contains("a new process took over"),
        "{}",
        old.log()
    );
    assert_eq!(version(port), "v2");
    let load = load.join().expect("wrk thread");
    assert_clean(&load, &format!("{}\n--- new:\n{}", old.log(), new.log()));

    // And the new one can be taken over in turn, at the same path.
    new.wait_for_log("can take over with --takeover");
    std::fs::write(&entry, app_text(lang, "v3")).unwrap();
    let newer = take_over(&entry, old.db_path(), &sock);
    assert_eq!(new.wait_exit().code(), Some(0), "{}", new.log());
    assert_eq!(newer.port, port);
    assert_eq!(version(port), "v3");
}

#[test]
fn a_new_process_takes_over_under_load_lua() {
    takeover_under_load(Lang::Lua);
}

#[test]
fn a_new_process_takes_over_under_load_js() {
    takeover_under_load(Lang::Js);
}

#[test]
fn a_failed_takeover_leaves_the_old_server_serving() {
    let (dir, entry) = app(Lang::Lua, "v1");
    let (sock, old) = serving_takeovers(&dir, &entry);
    std::fs::write(
        &entry,
        "app.get(\"/\", function(req, res)\n  res:json({ v = ) end)\n",
    )
    .unwrap();
    let failed = Server::try_start_on(
        &entry,
        old.db_path().to_str().unwrap(),
        &["--workers", "2", "--takeover", sock.to_str().unwrap()],
    );
    let log = match failed {
        Ok(s) => panic!("the broken app started:\n{}", s.log()),
        Err(log) => log,
    };
    assert!(log.contains("app.lua:2"), "{log}");
    old.wait_for_log("this server goes on serving");
    assert_eq!(version(old.port), "v1");
}

#[test]
fn without_a_takeover_a_second_server_is_refused() {
    let (_dir, entry) = app(Lang::Lua, "v1");
    let s = Server::start(&entry, &["--workers", "1"]);
    let port = s.port.to_string();
    let out = Command::new(bin())
        .args(["-p", &port, "-d", ":memory:", entry.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another process already listens there"),
        "{err}"
    );
}

#[test]
#[allow(unsafe_code)] // pre_exec, and kill
fn systemd_socket_activation_serves_the_passed_socket() {
    let (_dir, entry) = app(Lang::Lua, "v1");
    let db_dir = tempfile::tempdir().unwrap();
    let db = db_dir.path().join("data.db");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let fd = listener.as_raw_fd();
    // sh sets LISTEN_PID to its own pid, which `exec` keeps for cove.
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "LISTEN_PID=$$ LISTEN_FDS=1 exec \"$0\" \"$@\"",
        bin(),
        "--workers",
        "2",
        "-p",
        "1",
        "-d",
        db.to_str().unwrap(),
        entry.to_str().unwrap(),
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    // SAFETY: dup2 and fcntl are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if fd == 3 {
                let flags = libc::fcntl(3, libc::F_GETFD);
                libc::fcntl(3, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            } else if libc::dup2(fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn");
    drop(listener);
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let start = Instant::now();
    let mut log = String::new();
    while !log.contains("listening on") {
        let left = TIMEOUT.saturating_sub(start.elapsed());
        match rx.recv_timeout(left) {
            Ok(line) => {
                log.push_str(&line);
                log.push('\n');
            }
            Err(_) => {
                let _ = child.kill();
                panic!("cove did not start:\n{log}");
            }
        }
    }
    assert!(
        log.contains(&format!("127.0.0.1:{port}")),
        "not on the passed socket:\n{log}"
    );
    for _ in 0..10 {
        assert_eq!(version(port), "v1");
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{log}");
}

/// An app that writes as it loads and on every POST: SIGHUP while requests
/// write. During a reload each worker has two versions with a database
/// connection each; neither may keep the write lock across an await, or
/// the other's write would wait for it on the same thread for ever.
#[test]
fn sighup_while_requests_write_loses_and_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let entry = dir.path().join("app.lua");
    let app = |v: &str| {
        format!(
            "db.exec(\"INSERT INTO loads (version) VALUES (?)\", {{ \"{v}\" }})\n\
             app.get(\"/\", function(req, res) res:json({{ v = \"{v}\" }}) end)\n\
             app.post(\"/items\", function(req, res)\n\
               db.exec(\"INSERT INTO items (name) VALUES (?)\", {{ req.body }})\n\
               res:json({{ ok = true }}, 201)\n\
             end)\n"
        )
    };
    std::fs::create_dir_all(dir.path().join("migrations")).unwrap();
    std::fs::write(
        dir.path().join("migrations/001_init.sql"),
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);\n\
         CREATE TABLE loads (id INTEGER PRIMARY KEY, version TEXT);\n",
    )
    .unwrap();
    std::fs::write(&entry, app("v0")).unwrap();
    let s = Server::start(&entry, &["--workers", "2"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let (port, stop) = (s.port, stop.clone());
            thread::spawn(move || {
                let (mut ok, mut failed) = (0u64, Vec::new());
                let mut conn = Conn::open(port);
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                    i += 1;
                    let name = format!("t{t}-{i}");
                    match conn.try_request("POST", "/items", &[], Some(name.as_bytes())) {
                        Ok(r) if r.status == 201 => ok += 1,
                        Ok(r) => failed.push(format!("{} {}", r.status, r.text())),
                        Err(e) => {
                            failed.push(e.to_string());
                            conn = Conn::open(port);
                        }
                    }
                }
                (ok, failed)
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(300));
    for n in 1..=5 {
        std::fs::write(&entry, app(&format!("v{n}"))).unwrap();
        s.signal(libc::SIGHUP);
        s.wait_for_log_count("reloaded the app on every worker", n);
        thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut total = 0;
    for w in writers {
        let (ok, failed) = w.join().expect("writer");
        assert!(failed.is_empty(), "{failed:?}\n{}", s.log());
        total += ok;
    }
    assert!(total > 100, "only {total} writes");
    assert_eq!(version(s.port), "v5");
}
