//! Storage faults: a database path that cannot be written, a damaged file,
//! a disk that is full at start or fills up while serving. Each is a clear
//! error at start (exit 1), or a 503 with `Retry-After` per write while
//! reads go on — never a panic, never a write acknowledged and then lost.
//!
//! A full disk is a file size limit (RLIMIT_FSIZE) on the server process:
//! writes past it fail as on a full disk, with no mount and no privilege
//! needed. A file this process may not write needs another user than root
//! (root writes regardless of permissions): run as root, the server runs as
//! `nobody`.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;

use serde_json::json;

use crate::util::{bin, both, fixture, Conn, Lang, Response, TIMEOUT};

both!(
    a_disk_that_fills_up_answers_503_per_write_and_reads_go_on,
    a_statement_too_big_for_the_disk_answers_503,
);

/// A file size limit low enough that a few writes of the storage fixture
/// reach it, and high enough for its start (the WAL index alone is 32 KiB).
const FULL_AT: u64 = 1 << 20;

fn app(lang: Lang) -> PathBuf {
    fixture("storage").with_extension(lang.ext())
}

/// `cove` serving `app` on `db`, two workers, in `dir`.
fn command(app: &Path, db: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(["--workers", "2", "-p", "0", "-d"])
        .arg(db)
        .arg(app)
        .current_dir(dir)
        .env_remove("HULL_MAX_INSTRUCTIONS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Writes past `bytes` fail with EFBIG — as on a full disk — instead of
/// killing the process with SIGXFSZ.
#[allow(unsafe_code)]
fn limit_file_size(cmd: &mut Command, bytes: u64) {
    // SAFETY: the closure runs in the child between fork and exec and calls
    // only setrlimit and signal, both async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
}

/// What became of a started server.
enum Started {
    Serving(Serving),
    /// It exited before listening: its exit code and everything it wrote.
    Exited(Option<i32>, String),
}

/// A server listening on `port`; killed when dropped.
struct Serving {
    child: Child,
    port: u16,
    log: Arc<Mutex<String>>,
}

impl Serving {
    fn request(&self, method: &str, path: &str) -> Response {
        Conn::open(self.port).request(method, path, &[], None)
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Wait until the log contains `needle` (a line may trail its response).
    fn wait_for_log(&self, needle: &str) -> String {
        let start = std::time::Instant::now();
        loop {
            let log = self.log();
            if log.contains(needle) {
                return log;
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "log never had {needle:?}:\n{log}"
            );
            thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(mut cmd: Command) -> Started {
    let mut child = cmd.spawn().expect("spawn cove");
    let stderr = child.stderr.take().expect("stderr");
    let log = Arc::new(Mutex::new(String::new()));
    let (tx, rx) = mpsc::channel();
    let sink = log.clone();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(port) = line
                .split("listening on http://127.0.0.1:")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next()?.parse::<u16>().ok())
            {
                let _ = tx.send(port);
            }
            let mut s = sink.lock().unwrap();
            s.push_str(&line);
            s.push('\n');
        }
        // The pipe closed: the process is gone (or closed stderr).
        drop(tx);
    });
    match rx.recv_timeout(TIMEOUT) {
        Ok(port) => Started::Serving(Serving { child, port, log }),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let code = child.wait().expect("wait").code();
            let text = log.lock().unwrap().clone();
            Started::Exited(code, text)
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            let _ = child.kill();
            panic!("cove neither listened nor exited:\n{}", log.lock().unwrap());
        }
    }
}

fn serving(cmd: Command) -> Serving {
    match start(cmd) {
        Started::Serving(s) => s,
        Started::Exited(code, log) => panic!("cove exited ({code:?}):\n{log}"),
    }
}

/// The message of a server that must refuse to start: exit 1, no panic.
fn refused(cmd: Command) -> String {
    match start(cmd) {
        Started::Serving(s) => panic!("cove started:\n{}", s.log()),
        Started::Exited(code, log) => {
            assert_eq!(code, Some(1), "{log}");
            assert!(!log.contains("panicked"), "{log}");
            log
        }
    }
}

fn a_disk_that_fills_up_answers_503_per_write_and_reads_go_on(lang: Lang) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = command(&app(lang), &dir.path().join("data.db"), dir.path());
    limit_file_size(&mut cmd, FULL_AT);
    let s = serving(cmd);
    let mut acknowledged = 0;
    let full = loop {
        let r = s.request("POST", "/notes");
        match r.status {
            201 => acknowledged += 1,
            _ => break r,
        }
        assert!(acknowledged < 100, "the disk never filled:\n{}", s.log());
    };
    assert!(acknowledged > 0, "{lang:?}: no write fitted:\n{}", s.log());
    assert_eq!(full.status, 503, "{}\n{}", full.text(), s.log());
    assert_eq!(full.header("retry-after"), Some("1"));
    // Why, in the log: the operating system's words, not just "I/O error".
    s.wait_for_log("a write group failed to commit: disk I/O error: File too large");
    // Reads go on, and every acknowledged write is there — none other.
    let r = s.request("GET", "/notes/count");
    assert_eq!((r.status, r.json()), (200, json!({ "n": acknowledged })));
    // Each write gets its 503 while the disk stays full.
    let again = s.request("POST", "/notes");
    assert_eq!(again.status, 503, "{}", s.log());
    assert_eq!(s.request("GET", "/notes/count").json()["n"], acknowledged);
    assert!(!s.log().contains("panicked"), "{}", s.log());
}

fn a_statement_too_big_for_the_disk_answers_503(lang: Lang) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = command(&app(lang), &dir.path().join("data.db"), dir.path());
    limit_file_size(&mut cmd, FULL_AT);
    let s = serving(cmd);
    assert_eq!(s.request("POST", "/notes").status, 201);
    // The statement itself fails (SQLite spills its cache to the disk).
    let r = s.request("POST", "/huge");
    assert_eq!(r.status, 503, "{}\n{}", r.text(), s.log());
    assert_eq!(r.header("retry-after"), Some("1"));
    s.wait_for_log("db.exec failed: disk I/O error: File too large");
    assert_eq!(s.request("GET", "/notes/count").json(), json!({ "n": 1 }));
    assert_eq!(
        s.request("POST", "/notes").status,
        201,
        "small writes still fit"
    );
}

#[test]
fn a_disk_full_at_start_is_an_error_naming_the_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("data.db");
    let mut cmd = command(&app(Lang::Lua), &db, dir.path());
    limit_file_size(&mut cmd, 16 * 1024);
    let log = refused(cmd);
    assert!(
        log.contains(&format!(
            "cannot open database {}: disk I/O error: File too large",
            db.display()
        )),
        "{log}"
    );
    assert!(log.contains("free some disk space"), "{log}");
}

#[test]
fn a_damaged_database_file_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("data.db");
    let garbage: Vec<u8> = (0..16384u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&db, &garbage).unwrap();
    let log = refused(command(&app(Lang::Lua), &db, dir.path()));
    assert!(
        log.contains(&format!(
            "cannot open database {}: file is not a database",
            db.display()
        )),
        "{log}"
    );
    assert!(
        log.contains("restore it from a backup, or move it aside"),
        "{log}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "the file is left as it was"
    );
}

#[test]
fn a_path_that_cannot_hold_the_database_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = refused(command(&app(Lang::Lua), dir.path(), dir.path()));
    assert!(
        log.contains("it is a directory; name a file in it"),
        "{log}"
    );
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let log = refused(command(&app(Lang::Js), &file.join("data.db"), dir.path()));
    assert!(log.contains("plain is not a directory"), "{log}");
}

/// Root writes whatever the permissions say: as root, run the server as
/// `nobody`, which needs the app, the directory and the binary readable by
/// it — a copy of the binary in `dir`, for the checkout may sit where
/// `nobody` cannot look (under /root).
fn unprivileged(cmd: &Command, dir: &Path) -> Command {
    if !is_root() {
        return rebuilt(cmd, Path::new(bin()));
    }
    set_mode(dir, 0o755);
    let exe = dir.join("cove");
    if !exe.exists() {
        std::fs::copy(bin(), &exe).unwrap();
        set_mode(&exe, 0o755);
    }
    let mut own = rebuilt(cmd, &exe);
    own.uid(65534).gid(65534);
    own
}

/// `cmd` with `program` in its place: the same arguments, directory and
/// environment changes.
fn rebuilt(cmd: &Command, program: &Path) -> Command {
    let mut own = Command::new(program);
    own.args(cmd.get_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(d) = cmd.get_current_dir() {
        own.current_dir(d);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => own.env(k, v),
            None => own.env_remove(k),
        };
    }
    own
}

#[allow(unsafe_code)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The storage fixture's Lua app, copied where `nobody` can read it.
fn readable_app(dir: &Path) -> PathBuf {
    let app_dir = dir.join("app");
    std::fs::create_dir_all(app_dir.join("migrations")).unwrap();
    let from = fixture("storage");
    let from = from.parent().unwrap();
    for name in ["app.lua", "migrations/001_init.sql"] {
        std::fs::copy(from.join(name), app_dir.join(name)).unwrap();
    }
    for d in [&app_dir, &app_dir.join("migrations")] {
        set_mode(d, 0o755);
    }
    app_dir.join("app.lua")
}

#[test]
fn a_database_this_user_may_not_write_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = readable_app(dir.path());
    // A file that may be read but not written: SQLite would open it
    // read-only without a word, and every write would fail.
    let db = dir.path().join("data.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE t(x)")
        .unwrap();
    set_mode(&db, 0o444);
    let cmd = unprivileged(&command(&app, &db, dir.path()), dir.path());
    let log = refused(cmd);
    assert!(
        log.contains(&format!(
            "cannot open database {}: this process may not write it",
            db.display()
        )),
        "{log}"
    );
    assert!(
        log.contains("give the user running cove write access"),
        "{log}"
    );
    // A new file in a directory this user may not write.
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    set_mode(&locked, 0o555);
    let cmd = unprivileged(
        &command(&app, &locked.join("new.db"), dir.path()),
        dir.path(),
    );
    let log = refused(cmd);
    assert!(log.contains("cannot create files in"), "{log}");
    assert!(log.contains("Permission denied"), "{log}");
}
