//! Private PostgreSQL, Redis, nginx and Pebble (ACME) instances for tests
//! (dev-only).
//!
//! Each `start()` runs a fresh server on a free port on 127.0.0.1, with
//! its data, config and logs in a temp dir of its own, so tests running
//! in parallel threads never share one. Dropping the handle stops the
//! server and removes the temp dir.
//!
//! When a server's binaries are not installed, `start()` prints one
//! `skipped: ...` line to stderr and returns `None`, so the test can
//! return early; with the environment variable `COVE_REQUIRE_SERVICES`
//! set (as CI does) it panics instead. Any other failure panics with the
//! tail of the server's log.
//!
//! ```no_run
//! let Some(pg) = cove_testsvc::Postgres::start() else { return };
//! let url = pg.url(); // postgres://cove:<password>@127.0.0.1:<port>/cove
//! # drop(url);
//! ```

mod nginx;
mod pebble;
mod postgres;
mod redis;

pub use nginx::Nginx;
pub use pebble::Pebble;
pub use postgres::Postgres;
pub use redis::Redis;

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// With this environment variable set, a missing server is a failure
/// (panic) instead of a skipped test.
const REQUIRE_VAR: &str = "COVE_REQUIRE_SERVICES";

/// How long a server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// A port on 127.0.0.1 that was free a moment ago: binds port 0, reads the
/// port the kernel chose and closes the socket again.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// The outcome of a server that is not installed: `None` after saying so
/// on stderr, or a panic when `COVE_REQUIRE_SERVICES` is set.
fn unavailable<T>(reason: &str) -> Option<T> {
    if std::env::var_os(REQUIRE_VAR).is_some() {
        panic!("{reason} (and {REQUIRE_VAR} is set)");
    }
    // Straight to stderr: the test harness hides eprintln! of passing
    // tests. libtest names each test's thread after the test.
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {reason} (in {test}; set {REQUIRE_VAR}=1 to make this a failure)"
    );
    None
}

/// An executable named `name` on PATH or in the usual system directories
/// (nginx lives in /usr/sbin, which a non-root PATH may lack).
fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(
            [
                "/usr/local/sbin",
                "/usr/local/bin",
                "/usr/sbin",
                "/usr/bin",
                "/sbin",
                "/bin",
            ]
            .map(PathBuf::from),
        )
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[allow(unsafe_code)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[allow(unsafe_code)]
fn send_signal(pid: u32, sig: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill has no memory-safety preconditions; the pid is our own
    // child, not yet reaped, so it cannot name another process.
    unsafe { libc::kill(pid, sig) };
}

/// A temp dir for one server, named after it.
fn temp_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("create a temp dir")
}

/// The last lines of a log file, for panic messages.
fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    tail(&text)
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(30);
    format!("--- log tail ---\n{}", lines[start..].join("\n"))
}

/// The log file a server's stdout and stderr are appended to.
fn open_log(path: &Path) -> File {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
fn accepts(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

/// Why a server did not come up.
enum LaunchError {
    /// Someone else took the port between `free_port` and the bind: try
    /// another one.
    PortInUse,
    /// Anything else, with the log tail.
    Failed(String),
}

/// Spawns `cmd` with stdout and stderr appended to `log` and waits until
/// `ready(pid, new log text)` says it accepts connections.
fn launch(
    cmd: &mut Command,
    log: &Path,
    mut ready: impl FnMut(u32, &str) -> bool,
) -> Result<Child, LaunchError> {
    let out = open_log(log);
    let offset = out.metadata().map(|m| m.len()).unwrap_or(0);
    let err = out.try_clone().expect("clone a log file handle");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| LaunchError::Failed(format!("spawn {:?}: {e}", cmd.get_program())))?;
    let new_log = || {
        let mut text = String::new();
        if let Ok(mut f) = File::open(log) {
            let _ = f.seek(SeekFrom::Start(offset));
            let _ = f.read_to_string(&mut text);
        }
        text
    };
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let text = new_log();
        if text.contains("Address already in use") {
            terminate(&mut child, libc::SIGKILL, Duration::ZERO);
            return Err(LaunchError::PortInUse);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(LaunchError::Failed(format!(
                "exited ({status})\n{}",
                tail(&text)
            )));
        }
        if ready(child.id(), &text) {
            return Ok(child);
        }
        if Instant::now() > deadline {
            terminate(&mut child, libc::SIGQUIT, Duration::from_secs(5));
            return Err(LaunchError::Failed(format!(
                "not ready after {} s\n{}",
                READY_TIMEOUT.as_secs(),
                tail(&new_log())
            )));
        }
        sleep(Duration::from_millis(10));
    }
}

/// Starts a server on a free port, trying other ports when the chosen
/// one was taken meanwhile; panics with `what` and the log on any other
/// failure.
fn launch_on_free_port<T>(
    what: &str,
    mut start: impl FnMut(u16) -> Result<T, LaunchError>,
) -> (u16, T) {
    const ATTEMPTS: usize = 5;
    for _ in 0..ATTEMPTS {
        let port = free_port();
        match start(port) {
            Ok(t) => return (port, t),
            Err(LaunchError::PortInUse) => continue,
            Err(LaunchError::Failed(why)) => panic!("{what} did not start: {why}"),
        }
    }
    panic!("{what} did not start: {ATTEMPTS} ports in a row were already in use")
}

/// Sends `sig`, waits up to `grace` for the process to exit, then kills
/// it. Never panics (it runs in Drop, possibly while unwinding).
fn terminate(child: &mut Child, sig: libc::c_int, grace: Duration) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    send_signal(child.id(), sig);
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The running server process of a handle, if any (absent after `stop`).
#[derive(Default)]
struct Process(Mutex<Option<Child>>);

impl Process {
    fn lock(&self) -> MutexGuard<'_, Option<Child>> {
        // A test that panicked while holding it must not keep Drop from
        // stopping the server.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, child: Child) {
        *self.lock() = Some(child);
    }

    /// Stops the process (see [`terminate`]); a no-op when stopped.
    fn stop(&self, sig: libc::c_int, grace: Duration) {
        if let Some(mut child) = self.lock().take() {
            terminate(&mut child, sig, grace);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_port_is_bindable() {
        let port = free_port();
        assert_ne!(port, 0);
        TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
    }

    #[test]
    fn unavailable_skips_or_panics() {
        let outcome = std::panic::catch_unwind(|| {
            unavailable::<()>("no such server (this line is a test of the skip message)")
        });
        match std::env::var_os(REQUIRE_VAR) {
            Some(_) => assert!(outcome.is_err()),
            None => assert_eq!(outcome.ok(), Some(None)),
        }
    }

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        cmd
    }

    #[test]
    fn launch_outcomes() {
        let dir = temp_dir("cove-launch-");
        let log = dir.path().join("log");
        let ready = launch(&mut sh("echo up; exec sleep 30"), &log, |_, log| {
            log.contains("up")
        });
        let Ok(mut child) = ready else {
            panic!("not ready")
        };
        terminate(&mut child, libc::SIGTERM, Duration::from_secs(5));
        assert!(child.try_wait().unwrap().is_some());

        let in_use = "echo 'bind: Address already in use'; exec sleep 30";
        let outcome = launch(&mut sh(in_use), &log, |_, _| false);
        assert!(matches!(outcome, Err(LaunchError::PortInUse)));

        match launch(&mut sh("echo boom; exit 3"), &log, |_, _| false) {
            Err(LaunchError::Failed(why)) => {
                assert!(why.contains("boom") && !why.contains("up"), "{why}")
            }
            _ => panic!("expected a failure"),
        }
    }

    #[test]
    fn handles_are_send_and_sync() {
        // Tests share one server through a static.
        fn shareable<T: Send + Sync>() {}
        shareable::<Postgres>();
        shareable::<Redis>();
        shareable::<Nginx>();
    }

    #[test]
    fn finds_sh() {
        assert!(find_program("sh").is_some());
        assert!(find_program("no-such-program-cove").is_none());
    }
}
