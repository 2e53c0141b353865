//! `--sandbox-probe` (hidden, for the tests): right after a thread has
//! entered the sandbox, try what it should forbid and print what the kernel
//! answered. The tests compare the answers with and without `--no-sandbox`,
//! so a sandbox that silently did nothing fails them; the log line saying
//! it was applied proves nothing by itself.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Run each `op` (`read=PATH`, `write=PATH`, `spawn=PATH`, `exec=PATH`,
/// `connect=ADDR`, `bind=ADDR`, `udp`) on this thread and print
/// `sandbox-probe <who> <op>: allowed | denied (…) | failed (…)` on stderr.
pub(crate) fn run(ops: &[String], who: &str) {
    for op in ops {
        let (kind, arg) = op.split_once('=').unwrap_or((op, ""));
        let outcome = match attempt(kind, arg) {
            Ok(()) => "allowed".to_string(),
            Err(e) if denied(&e) => format!("denied ({e})"),
            Err(e) => format!("failed ({e})"),
        };
        eprintln!("sandbox-probe {who} {op}: {outcome}");
    }
}

fn denied(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

fn addr(arg: &str) -> io::Result<SocketAddr> {
    arg.parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{arg:?}: {e}")))
}

fn attempt(kind: &str, arg: &str) -> io::Result<()> {
    match kind {
        "read" => File::open(arg).and_then(|mut f| f.read(&mut [0u8; 1]).map(drop)),
        "write" => OpenOptions::new()
            .create(true)
            .append(true)
            .open(arg)
            .and_then(|mut f| f.write_all(b"probe\n")),
        // Inherited stdio: /dev/null is not readable in the sandbox.
        "spawn" => Command::new(arg).stdin(Stdio::inherit()).status().map(drop),
        // Replaces this process if it is allowed: the test then sees the
        // new program's output, and no server.
        "exec" => Err(Command::new(arg).exec()),
        "connect" => TcpStream::connect_timeout(&addr(arg)?, Duration::from_secs(5)).map(drop),
        "bind" => TcpListener::bind(addr(arg)?).map(drop),
        "udp" => UdpSocket::bind("127.0.0.1:0").map(drop),
        other => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("unknown probe {other:?}"),
        )),
    }
}
