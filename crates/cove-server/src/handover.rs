//! Where the listening sockets come from, and handing them to the next
//! process (docs/operations.md, "Deploys").
//!
//! A server binds its port itself, unless it is given sockets that listen
//! already: by systemd (socket activation, `LISTEN_FDS`), or by the server
//! it takes over from (`--takeover PATH`). In both cases nothing binds the
//! port a second time: the sockets are the same kernel objects, so the
//! connections queued on them wait for whichever process accepts next.
//!
//! The handover runs over a Unix socket the running server listens on
//! (`--takeover-socket PATH`, created when it starts, before the sandbox):
//!
//! 1. the new process connects; the old one sends `cove-takeover 1 N` and
//!    its N listening sockets (SCM_RIGHTS);
//! 2. the new process loads the app on every worker and serves on them;
//!    then it writes `ready`. If it fails instead, it only closes the
//!    connection: the old one goes on serving as if nothing had happened.
//! 3. on `ready` the old process stops accepting, removes its socket file,
//!    answers `done` and drains (as on SIGTERM); the new one, on `done`,
//!    listens on the same path for the next deploy.

use std::io::{self, BufRead, BufReader, IoSlice, IoSliceMut, Write};
use std::mem::MaybeUninit;
use std::net::TcpListener;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
};

use cove_core::log;

/// The handover's first line.
const HELLO: &str = "cove-takeover 1";
/// More sockets than this is not a Cove server's (one per worker).
const MAX_FDS: usize = 256;

/// Sockets systemd passed (`LISTEN_FDS`, `LISTEN_PID`; they start at fd 3),
/// or `None` when the variables are not meant for this process.
pub(crate) fn systemd_listeners() -> io::Result<Option<Vec<TcpListener>>> {
    match crate::listen_fds::take()? {
        None => Ok(None),
        Some(fds) => fds
            .into_iter()
            .map(listening)
            .collect::<io::Result<_>>()
            .map(Some),
    }
}

/// `fd` as a non-blocking TCP listener, if it is a listening TCP socket.
fn listening(fd: OwnedFd) -> io::Result<TcpListener> {
    let raw = fd.as_raw_fd();
    let sock = socket2::Socket::from(fd);
    let is_tcp = sock.r#type()? == socket2::Type::STREAM
        && sock.local_addr()?.as_socket().is_some()
        && sock.is_listener()?;
    if !is_tcp {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("fd {raw} is not a listening TCP socket"),
        ));
    }
    sock.set_nonblocking(true)?;
    Ok(sock.into())
}

/// The new process's side: connected to the old server, holding its sockets.
pub(crate) struct Incoming {
    stream: UnixStream,
    path: PathBuf,
}

/// Connect to the server listening for a takeover on `path` and receive
/// its listening sockets.
pub(crate) fn take_over(path: &Path) -> io::Result<(Vec<TcpListener>, Incoming)> {
    let named = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("cannot take over from {}: {e}", path.display()),
        )
    };
    let stream = UnixStream::connect(path).map_err(named)?;
    let (line, fds) = receive(&stream).map_err(named)?;
    let expected = format!("{HELLO} {}", fds.len());
    if line.trim_end() != expected || fds.is_empty() {
        return Err(named(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected answer {line:?} with {} socket(s)", fds.len()),
        )));
    }
    let listeners = fds
        .into_iter()
        .map(listening)
        .collect::<io::Result<Vec<_>>>()
        .map_err(named)?;
    Ok((
        listeners,
        Incoming {
            stream,
            path: path.to_path_buf(),
        },
    ))
}

impl Incoming {
    /// Every worker serves: tell the old server to stop, and wait until it
    /// has let go of the path.
    pub(crate) fn finish(self) -> io::Result<()> {
        let mut stream = &self.stream;
        stream.write_all(b"ready\n")?;
        let mut line = String::new();
        BufReader::new(&self.stream).read_line(&mut line)?;
        if line.trim_end() != "done" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "the old server at {} did not confirm the takeover ({line:?})",
                    self.path.display()
                ),
            ));
        }
        Ok(())
    }
}

/// Read one line and the fds that came with it.
fn receive(stream: &UnixStream) -> io::Result<(String, Vec<OwnedFd>)> {
    let mut buf = [0u8; 256];
    let mut space = vec![MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let msg = recvmsg(stream, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC)?;
    if msg.flags.contains(ReturnFlags::CTRUNC) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("more than {MAX_FDS} sockets"),
        ));
    }
    let mut fds = Vec::new();
    for c in control.drain() {
        if let RecvAncillaryMessage::ScmRights(got) = c {
            fds.extend(got);
        }
    }
    let n = msg.bytes.min(buf.len());
    Ok((String::from_utf8_lossy(&buf[..n]).into_owned(), fds))
}

/// The running server's side: the Unix socket a new process connects to.
pub(crate) struct Offer {
    listener: UnixListener,
    path: PathBuf,
}

impl Offer {
    /// Listen on `path`. A socket file nobody answers on (left by a server
    /// that died) is replaced; one a server answers on is an error.
    pub(crate) fn bind(path: &Path) -> io::Result<Offer> {
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(io::Error::new(
                    io::ErrorKind::AddrInUse,
                    format!(
                        "a server listens on the takeover socket {} already; take over from \
                         it with --takeover {0}",
                        path.display()
                    ),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot listen on takeover socket {}: {e}", path.display()),
            )
        })?;
        Ok(Offer {
            listener,
            path: path.to_path_buf(),
        })
    }

    /// Wait (on this thread) for a new process; hand it `fds`, and return
    /// once one has confirmed it serves (and the socket file is removed).
    pub(crate) fn serve(self, fds: Vec<OwnedFd>) {
        let raw: Vec<BorrowedFd<'_>> = fds.iter().map(AsFd::as_fd).collect();
        let mut taken = None;
        for conn in self.listener.incoming() {
            let Ok(conn) = conn else { continue };
            match offer(&conn, &raw) {
                Ok(true) => {
                    taken = Some(conn);
                    break;
                }
                Ok(false) => log::warn(
                    "takeover: the new process closed the connection before it served \
                     (see its log); this server goes on serving",
                ),
                Err(e) => log::warn(&format!(
                    "takeover failed: {e}; this server goes on serving"
                )),
            }
        }
        // Let go of the path before saying so: the new process listens there next.
        let _ = std::fs::remove_file(&self.path);
        drop(self.listener);
        if let Some(mut conn) = taken {
            let _ = conn.write_all(b"done\n");
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Send the sockets; true once the new process says it serves.
fn offer(conn: &UnixStream, fds: &[BorrowedFd<'_>]) -> io::Result<bool> {
    let hello = format!("{HELLO} {}\n", fds.len());
    let mut space = vec![MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(fds.len()))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::other(
            "the sockets do not fit the control message",
        ));
    }
    let sent = sendmsg(
        conn,
        &[IoSlice::new(hello.as_bytes())],
        &mut control,
        SendFlags::empty(),
    )?;
    if sent != hello.len() {
        return Err(io::Error::other("the handover message was cut short"));
    }
    log::info("takeover: listening sockets handed to a new process; waiting for it to serve");
    let mut line = String::new();
    BufReader::new(conn).read_line(&mut line)?;
    Ok(line.trim_end() == "ready")
}
