//! Starting, checking and stopping the servers under test. Every child runs
//! in its own process group, tracked so that Ctrl-C / SIGTERM (handler) and
//! early returns (Drop) kill the whole group: workers, cluster children and
//! install scripts' subprocesses included.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::wire::{self, Wire};

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

/// Signal the process group led by `pid` (and `pid` itself, in case it
/// left the group).
fn signal_group(pid: u32, sig: &str) {
    for target in [format!("-{pid}"), pid.to_string()] {
        let _ = Command::new("kill")
            .args([sig, "--", &target])
            .stderr(Stdio::null())
            .status();
    }
}

/// A command in its own process group, tracked until it is reaped.
pub fn spawn_group(cmd: &mut Command) -> std::io::Result<Child> {
    let child = cmd.process_group(0).spawn()?;
    track(child.id());
    Ok(child)
}

/// On SIGINT/SIGTERM/SIGHUP: SIGKILL every tracked process group, drop the
/// scratch directory and exit 130.
pub fn install_signal_handler() -> Result<()> {
    ctrlc::set_handler(|| {
        let pids: Vec<u32> = TRACKED.lock().unwrap_or_else(|e| e.into_inner()).clone();
        kill_groups(&pids);
        crate::services::stop_all();
        remove_scratch();
        eprintln!(
            "\ncove-bench: interrupted; killed {} process group(s)",
            pids.len()
        );
        std::process::exit(130);
    })
    .context("cannot install the signal handler")
}

/// SIGKILL the process groups led by `pids`, children of children included.
pub fn kill_groups(pids: &[u32]) {
    for pid in pids {
        signal_group(*pid, "-KILL");
    }
}

/// How to start one server.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// `taskset -c` list, e.g. `0` or `0,1`.
    pub cores: String,
}

/// A free TCP port on 127.0.0.1 (the OS picks it; the probe socket is
/// closed before the server binds it).
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0").context("cannot find a free port")?;
    Ok(l.local_addr()?.port())
}

/// A server process, ready to take requests.
pub struct Server {
    pub name: String,
    pub pid: u32,
    pub addr: String,
    child: Option<Child>,
    pub log: PathBuf,
    /// What `request` and `check` speak (HTTPS, HTTP/2 for the `tls` and
    /// `h2` tables' servers).
    pub wire: Wire,
}

/// Status and body of one response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl Server {
    /// Start `launch` on `port` with output to `log`, then wait (up to
    /// `ready_in`) until `GET /hello` answers over plain HTTP/1.1.
    pub fn start(
        name: &str,
        launch: &Launch,
        port: u16,
        log: &Path,
        ready_in: Duration,
    ) -> Result<Server> {
        Server::start_over(name, launch, port, log, ready_in, Wire::Http1)
    }

    /// `start`, with the readiness check and later requests over `wire`.
    pub fn start_over(
        name: &str,
        launch: &Launch,
        port: u16,
        log: &Path,
        ready_in: Duration,
        wire: Wire,
    ) -> Result<Server> {
        let out = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let mut cmd = Command::new("taskset");
        cmd.arg("-c")
            .arg(&launch.cores)
            .arg(&launch.program)
            .args(&launch.args)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&launch.cwd)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        let child = spawn_group(&mut cmd)
            .with_context(|| format!("cannot start {}", launch.program.display()))?;
        let mut server = Server {
            name: name.to_string(),
            pid: child.id(),
            addr: format!("127.0.0.1:{port}"),
            child: Some(child),
            log: log.to_path_buf(),
            wire,
        };
        let deadline = Instant::now() + ready_in;
        loop {
            if server.request("GET", "/hello", None).is_ok() {
                return Ok(server);
            }
            let exited = server
                .child
                .as_mut()
                .map(|c| c.try_wait())
                .transpose()?
                .flatten();
            if exited.is_some() || Instant::now() > deadline {
                let why = match exited {
                    Some(s) => format!("exited ({s}) before answering"),
                    None => format!("did not answer GET /hello within {} s", ready_in.as_secs()),
                };
                let text = std::fs::read_to_string(log).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(15).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                bail!(
                    "{name} {why}; the end of its log ({}):\n{}",
                    log.display(),
                    tail.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// One request on a fresh connection, over the server's wire.
    pub fn request(&self, method: &str, path: &str, body: Option<&str>) -> Result<Reply> {
        self.request_over(self.wire, method, path, body)
    }

    /// One request on a fresh connection over `wire`.
    pub fn request_over(
        &self,
        wire: Wire,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Result<Reply> {
        if wire != Wire::Http1 {
            return wire::request(wire, &self.addr, method, path, body)
                .with_context(|| format!("{} {method} {path}", self.name));
        }
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
        parse_reply(&raw).with_context(|| format!("{} {method} {path}", self.name))
    }

    /// Fail unless `method path` answers `status` with `expect` in the body.
    pub fn check(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        status: u16,
        expect: &str,
    ) -> Result<()> {
        self.check_over(self.wire, method, path, body, status, expect)
    }

    /// `check` over `wire`.
    pub fn check_over(
        &self,
        wire: Wire,
        method: &str,
        path: &str,
        body: Option<&str>,
        status: u16,
        expect: &str,
    ) -> Result<()> {
        let r = self.request_over(wire, method, path, body)?;
        if r.status != status || !r.body.contains(expect) {
            bail!(
                "{} {method} {path}: expected {status} with {expect:?}, got {}: {}",
                self.name,
                r.status,
                r.body.chars().take(300).collect::<String>()
            );
        }
        Ok(())
    }

    /// SIGTERM to the group, then SIGKILL if it has not exited within 5 s.
    pub fn stop(&mut self) -> Result<()> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        if child.try_wait()?.is_none() {
            signal_group(self.pid, "-TERM");
            let deadline = Instant::now() + Duration::from_secs(5);
            while child.try_wait()?.is_none() {
                if Instant::now() > deadline {
                    signal_group(self.pid, "-KILL");
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        signal_group(self.pid, "-KILL");
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
            signal_group(self.pid, "-KILL");
            let _ = child.wait();
            untrack(self.pid);
        }
    }
}

/// Status line and body of a `Connection: close` response (chunked bodies
/// are decoded, so body checks see the same text for every server).
pub fn parse_reply(raw: &[u8]) -> Result<Reply> {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| anyhow!("no response head: {text:?}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| anyhow!("bad status line: {head:?}"))?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .strip_prefix("transfer-encoding:")
            .is_some_and(|v| v.contains("chunked"))
    });
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok(Reply { status, body })
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.split(';').next().unwrap_or("").trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_chunked_replies() {
        let r = parse_reply(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi").unwrap();
        assert_eq!((r.status, r.body.as_str()), (200, "hi"));
        let c = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let r = parse_reply(c).unwrap();
        assert_eq!((r.status, r.body.as_str()), (404, "abcde"));
        assert!(parse_reply(b"garbage").is_err());
    }

    #[test]
    fn killing_a_group_reaches_grandchildren() {
        use std::io::BufRead;
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 60 & echo $!; wait"])
            .stdout(Stdio::piped());
        let mut child = spawn_group(&mut cmd).unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: u32 = line.trim().parse().unwrap();
        kill_groups(&[child.id()]);
        child.wait().unwrap();
        untrack(child.id());
        let deadline = Instant::now() + Duration::from_secs(5);
        while crate::procstat::read_pid(&grandchild.to_string()).is_ok_and(|s| s.state != 'Z') {
            assert!(
                Instant::now() < deadline,
                "the grandchild {grandchild} survived"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn free_ports_come_from_the_ephemeral_range() {
        // Whether it is still free when a server binds it is a race the
        // start-up check reports; here: the OS picked it.
        let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
        let mut it = range.split_whitespace().map(|v| v.parse::<u16>().unwrap());
        let (lo, hi) = (it.next().unwrap(), it.next().unwrap());
        let p = free_port().unwrap();
        assert!((lo..=hi).contains(&p), "{p} not in {lo}..={hi}");
    }
}
