//! Starting, checking and stopping the servers under test. Every child pid
//! is tracked so that Ctrl-C / SIGTERM (handler) and early returns (Drop)
//! kill them by pid.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

static TRACKED: Mutex<Vec<u32>> = Mutex::new(Vec::new());
static SCRATCH: Mutex<Option<PathBuf>> = Mutex::new(None);

pub fn track(pid: u32) {
    TRACKED.lock().unwrap_or_else(|e| e.into_inner()).push(pid);
}

pub fn untrack(pid: u32) {
    TRACKED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&p| p != pid);
}

/// A directory removed by the signal handler (and by `remove_scratch`).
pub fn set_scratch(dir: &Path) {
    *SCRATCH.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir.to_path_buf());
}

pub fn remove_scratch() {
    if let Some(dir) = SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).take() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// On SIGINT/SIGTERM/SIGHUP: SIGKILL every tracked child, drop the scratch
/// directory and exit 130.
pub fn install_signal_handler() -> Result<()> {
    ctrlc::set_handler(|| {
        let pids: Vec<u32> = TRACKED.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for pid in &pids {
            signal(*pid, "-KILL");
        }
        remove_scratch();
        eprintln!(
            "\ncove-bench: interrupted; killed {} child process(es)",
            pids.len()
        );
        std::process::exit(130);
    })
    .context("cannot install the signal handler")
}

/// A server process pinned to one core, ready to take requests.
pub struct Server {
    pub name: String,
    pub pid: u32,
    /// `host:port` from the server's `listening on http://…` line.
    pub addr: String,
    child: Option<Child>,
    log: PathBuf,
}

/// The address in a `listening on http://127.0.0.1:18700 (...)` log line.
pub fn listening_addr(line: &str) -> Option<String> {
    let rest = &line[line.find("listening on http://")? + "listening on http://".len()..];
    let addr = rest.split_whitespace().next()?.trim_end_matches('/');
    (!addr.is_empty()).then(|| addr.to_string())
}

impl Server {
    /// `taskset -c CORE program args…`; waits (up to 30 s) for the
    /// `listening on` line. Its stderr goes to `log`.
    pub fn start(
        name: &str,
        program: &Path,
        args: &[OsString],
        core: u32,
        log: &Path,
    ) -> Result<Server> {
        let mut child = Command::new("taskset")
            .arg("-c")
            .arg(core.to_string())
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        let pid = child.id();
        track(pid);
        let mut server = Server {
            name: name.to_string(),
            pid,
            addr: String::new(),
            child: None,
            log: log.to_path_buf(),
        };
        let stderr = child.stderr.take().expect("stderr is piped");
        server.child = Some(child);
        let mut file = std::fs::File::create(log)?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                let _ = writeln!(file, "{line}");
                if let Some(addr) = listening_addr(&line) {
                    let _ = tx.send(addr);
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(addr) => server.addr = addr,
            Err(e) => {
                std::thread::sleep(Duration::from_millis(100));
                let log = std::fs::read_to_string(&server.log).unwrap_or_default();
                let why = match e {
                    mpsc::RecvTimeoutError::Timeout => "did not report `listening on` in 30 s",
                    mpsc::RecvTimeoutError::Disconnected => "exited before listening",
                };
                bail!("server {name} {why}; its log:\n{}", log.trim_end());
            }
        }
        Ok(server)
    }

    /// One request on a fresh connection; returns (status, body).
    pub fn request(&self, method: &str, path: &str, body: Option<&str>) -> Result<(u16, String)> {
        let mut s = TcpStream::connect(&self.addr)
            .with_context(|| format!("cannot connect to {}", self.addr))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n",
            self.addr
        );
        if let Some(b) = body {
            req.push_str("Content-Type: application/json\r\n");
            req.push_str(&format!("Content-Length: {}\r\n", b.len()));
        }
        req.push_str("\r\n");
        req.push_str(body.unwrap_or(""));
        s.write_all(req.as_bytes())?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        let text = String::from_utf8_lossy(&raw);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| anyhow!("bad response from {}{path}: {head:?}", self.addr))?;
        Ok((status, body.to_string()))
    }

    /// Fail unless `method path` answers 200 with `expect` in the body.
    pub fn check(&self, method: &str, path: &str, body: Option<&str>, expect: &str) -> Result<()> {
        let (status, text) = self.request(method, path, body)?;
        if status != 200 || !text.contains(expect) {
            bail!(
                "{} {method} {path}: expected 200 with {expect:?}, got {status}: {}",
                self.name,
                text.chars().take(300).collect::<String>()
            );
        }
        Ok(())
    }

    /// SIGTERM, then SIGKILL if it has not exited within 5 s.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if child.try_wait()?.is_none() {
            signal(self.pid, "-TERM");
            let deadline = Instant::now() + Duration::from_secs(5);
            while child.try_wait()?.is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        untrack(self.pid);
        Ok(())
    }

    /// True while the process exists and is not a zombie.
    pub fn alive(&self) -> bool {
        crate::procstat::read_pid(&self.pid.to_string()).is_ok_and(|s| s.state != 'Z')
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            untrack(self.pid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_from_the_startup_line() {
        let line =
            "08:57:00 INFO  [cove] listening on http://127.0.0.1:18711 (Lua runtime, 1 worker)";
        assert_eq!(listening_addr(line).as_deref(), Some("127.0.0.1:18711"));
        assert_eq!(
            listening_addr("listening on http://[::1]:80").as_deref(),
            Some("[::1]:80")
        );
        assert_eq!(listening_addr("migration applied"), None);
    }
}
