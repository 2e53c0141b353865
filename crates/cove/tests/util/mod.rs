//! Test harness: start the real `cove` binary on a free port with its own
//! SQLite file, signal it and read its log. `client` talks raw HTTP/1.1.

mod client;
mod lang;
pub mod race;
pub mod servers;
pub mod sse;

pub use client::{build_request, Conn, Response};
pub(crate) use lang::both;
pub use lang::Lang;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// Upper bound for anything that should be quick; only there to avoid hangs.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The binary under test: cargo's build of this checkout, or the one the
/// `COVE_BIN` environment variable names (CI runs the suite again against
/// the optimized release binary that tools/build-pgo writes).
pub fn bin() -> &'static str {
    static BIN: OnceLock<String> = OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var("COVE_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_cove").to_string())
    })
}

/// `tests/fixtures/<name>/app.lua`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .join("app.lua")
}

/// `examples/<name>/app.<ext>` at the workspace root (`ext`: `lua` or `js`).
pub fn example_file(name: &str, ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
        .join(format!("app.{ext}"))
}

/// 1-based number of the first line of `file` containing `marker`.
pub fn line_of(file: &Path, marker: &str) -> usize {
    let src = std::fs::read_to_string(file).expect("read fixture");
    src.lines()
        .position(|l| l.contains(marker))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{marker:?} not found in {}", file.display()))
}

/// A running `cove` process; killed when dropped.
pub struct Server {
    child: Child,
    pub port: u16,
    log: Arc<Mutex<String>>,
    db: PathBuf,
    _dir: tempfile::TempDir,
}

/// Spawn `cove` with stderr captured line by line into `log`; `on_line` sees each line.
fn spawn_logged(
    exe: &Path,
    args: &[&str],
    cwd: &Path,
    envs: &[(&str, &str)],
    mut on_line: impl FnMut(&str) + Send + 'static,
) -> (Child, Arc<Mutex<String>>) {
    let mut child = Command::new(exe)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(cwd)
        .env_remove("HULL_MAX_INSTRUCTIONS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cove");
    let log = Arc::new(Mutex::new(String::new()));
    let sink = log.clone();
    let stderr = child.stderr.take().expect("stderr");
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            on_line(&line);
            let mut s = sink.lock().unwrap();
            s.push_str(&line);
            s.push('\n');
        }
    });
    (child, log)
}

fn port_of(line: &str) -> Option<u16> {
    let rest = line.split("listening on http").nth(1)?;
    let rest = rest.strip_prefix("s://").or(rest.strip_prefix("://"))?;
    let addr = rest.split_whitespace().next()?;
    addr.rsplit(':').next()?.parse().ok()
}

impl Server {
    /// Start `app` with `-p 0` and a fresh database; `extra` flags go first.
    /// Two workers unless `extra` says otherwise.
    pub fn start(app: &Path, extra: &[&str]) -> Server {
        Server::try_start(app, extra).unwrap_or_else(|log| panic!("cove did not start:\n{log}"))
    }

    pub fn fixture(name: &str, extra: &[&str]) -> Server {
        Server::start(&fixture(name), extra)
    }

    /// Like `start`, with extra environment variables for the server.
    pub fn start_with_env(app: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Server {
        Server::try_start_env(app, extra, envs)
            .unwrap_or_else(|log| panic!("cove did not start:\n{log}"))
    }

    /// Like `start`, but returns the log if the server exits before listening.
    pub fn try_start(app: &Path, extra: &[&str]) -> Result<Server, String> {
        Server::try_start_env(app, extra, &[])
    }

    fn try_start_env(app: &Path, extra: &[&str], envs: &[(&str, &str)]) -> Result<Server, String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("data.db");
        let mut args: Vec<&str> = extra.to_vec();
        if !extra.contains(&"--workers") {
            args.extend(["--workers", "2"]);
        }
        let db_str = db.to_str().expect("utf-8 temp path").to_string();
        args.extend([
            "-p",
            "0",
            "-d",
            &db_str,
            app.to_str().expect("utf-8 app path"),
        ]);
        Server::launch(&args, dir, db, envs)
    }

    /// Start `app` with `-p 0` on the database `db` (a PostgreSQL URL, or a
    /// file); two workers unless `extra` says otherwise.
    pub fn try_start_on(app: &Path, db: &str, extra: &[&str]) -> Result<Server, String> {
        Server::try_start_on_env(app, db, extra, &[])
    }

    /// [`Server::try_start_on`] with extra environment variables.
    pub fn try_start_on_env(
        app: &Path,
        db: &str,
        extra: &[&str],
        envs: &[(&str, &str)],
    ) -> Result<Server, String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut args: Vec<&str> = extra.to_vec();
        if !extra.contains(&"--workers") {
            args.extend(["--workers", "2"]);
        }
        args.extend(["-p", "0", "-d", db, app.to_str().expect("utf-8 app path")]);
        Server::launch(&args, dir, PathBuf::from(db), envs)
    }

    /// [`Server::try_start_on`], panicking with the log if it does not start.
    pub fn start_on(app: &Path, db: &str, extra: &[&str]) -> Server {
        Server::try_start_on(app, db, extra)
            .unwrap_or_else(|log| panic!("cove did not start:\n{log}"))
    }

    /// Start `cove` with exactly `args` (they name the port and the app),
    /// plus a fresh database, in the temp dir `dir`.
    pub fn start_args_in(dir: tempfile::TempDir, args: &[&str]) -> Result<Server, String> {
        let db = dir.path().join("data.db");
        let db_str = db.to_str().expect("utf-8 temp path").to_string();
        let mut all = args.to_vec();
        all.extend(["-d", &db_str]);
        Server::launch(&all, dir, db, &[])
    }

    /// Start the executable `exe` (one written by `cove build`) like
    /// `start`: `-p 0`, a fresh database, two workers unless `extra` says
    /// otherwise, in an empty directory.
    pub fn start_exe(exe: &Path, extra: &[&str]) -> Result<Server, String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("data.db");
        let mut args: Vec<&str> = extra.to_vec();
        if !extra.contains(&"--workers") {
            args.extend(["--workers", "2"]);
        }
        let db_str = db.to_str().expect("utf-8 temp path").to_string();
        args.extend(["-p", "0", "-d", &db_str]);
        Server::launch_exe(exe, &args, dir, db, &[])
    }

    /// `cove baseline` (the benchmark's scriptless server) on one worker.
    pub fn baseline() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("unused.db");
        Server::launch(&["baseline", "-p", "0", "--workers", "1"], dir, db, &[])
            .unwrap_or_else(|log| panic!("cove baseline did not start:\n{log}"))
    }

    fn launch(
        args: &[&str],
        dir: tempfile::TempDir,
        db: PathBuf,
        envs: &[(&str, &str)],
    ) -> Result<Server, String> {
        Server::launch_exe(Path::new(bin()), args, dir, db, envs)
    }

    fn launch_exe(
        exe: &Path,
        args: &[&str],
        dir: tempfile::TempDir,
        db: PathBuf,
        envs: &[(&str, &str)],
    ) -> Result<Server, String> {
        let (tx, rx) = mpsc::channel();
        let (mut child, log) = spawn_logged(exe, args, dir.path(), envs, move |line| {
            if let Some(port) = port_of(line) {
                let _ = tx.send(port);
            }
        });
        match rx.recv_timeout(TIMEOUT) {
            Ok(port) => Ok(Server {
                child,
                port,
                log,
                db,
                _dir: dir,
            }),
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().ok();
                let text = log.lock().unwrap().clone();
                Err(format!("exit status {status:?}\n{text}"))
            }
        }
    }

    pub fn db_path(&self) -> &Path {
        &self.db
    }

    /// Everything the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Wait until stderr contains `needle` (log lines may trail the response).
    pub fn wait_for_log(&self, needle: &str) -> String {
        self.wait_for_log_count(needle, 1)
    }

    /// Wait until stderr contains `needle` at least `n` times (a line may
    /// reach the log reader after the response it belongs to); the log then.
    pub fn wait_for_log_count(&self, needle: &str, n: usize) -> String {
        let start = Instant::now();
        loop {
            let log = self.log();
            if log.matches(needle).count() >= n {
                return log;
            }
            assert!(
                start.elapsed() < TIMEOUT,
                "log never contained {needle:?} {n} times:\n{log}"
            );
            thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, sig: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("pid");
        send_signal(pid, sig);
    }

    /// Wait for the process to exit (panics after `TIMEOUT`).
    pub fn wait_exit(&mut self) -> ExitStatus {
        wait_timeout(&mut self.child)
    }

    pub fn conn(&self) -> Conn {
        Conn::open(self.port)
    }

    pub fn get(&self, path: &str) -> Response {
        self.request("GET", path, &[], None)
    }

    pub fn post(&self, path: &str, body: &str) -> Response {
        self.request("POST", path, &[], Some(body.as_bytes()))
    }

    /// One request on a fresh connection.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Response {
        self.conn().request(method, path, headers, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[allow(unsafe_code)]
pub fn send_signal(pid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: kill(2) has no memory-safety preconditions; `pid` is our own child.
    let rc = unsafe { libc::kill(pid, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig}) failed");
}

fn wait_timeout(child: &mut Child) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            panic!("cove did not exit within {TIMEOUT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Result of running `cove` to completion.
pub struct Exit {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Run `cove args...` in a temporary directory and wait for it to exit.
pub fn run(args: &[&str]) -> Exit {
    run_exe(Path::new(bin()), args)
}

/// Write `text` to `dir/rel`, creating its directories.
pub fn write_file(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Run `exe args...` in a temporary directory and wait for it to exit.
pub fn run_exe(exe: &Path, args: &[&str]) -> Exit {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(exe);
    cmd.args(args).current_dir(dir.path());
    run_command(cmd)
}

/// Run `cmd` (stdin empty) to its exit, reading stdout and stderr; panics
/// after `TIMEOUT`.
pub fn run_command(mut cmd: Command) -> Exit {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_t = thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = wait_timeout(&mut child);
    Exit {
        code: status.code(),
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
    }
}
