//! systemd socket activation (`sd_listen_fds`): the listening sockets the
//! service manager passes at fds 3, 4, … with `LISTEN_FDS=n` and
//! `LISTEN_PID` set to this process's pid.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// Most sockets taken; systemd passes as many as the .socket unit lists.
const MAX: usize = 256;

/// The passed fds, owned, or `None` when the variables are not set for this
/// process. The variables are removed so that nothing started later takes
/// the fds too (`sd_listen_fds(1)`).
pub(crate) fn take() -> io::Result<Option<Vec<OwnedFd>>> {
    let Ok(count) = std::env::var("LISTEN_FDS") else {
        return Ok(None);
    };
    let pid = std::env::var("LISTEN_PID").ok();
    if pid.as_deref().and_then(|p| p.trim().parse::<u32>().ok()) != Some(std::process::id()) {
        return Ok(None);
    }
    for name in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] {
        std::env::remove_var(name);
    }
    let count: usize = match count.trim().parse() {
        Ok(n) if (1..=MAX).contains(&n) => n,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("LISTEN_FDS={count:?}: expected 1 to {MAX} sockets"),
            ))
        }
    };
    (3..3 + count as RawFd)
        .map(|fd| {
            // SAFETY: only to ask whether fd is open; the borrow ends at once.
            let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
            if rustix::io::fcntl_getfd(borrowed).is_err() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("LISTEN_FDS={count}, but fd {fd} is not open"),
                ));
            }
            // SAFETY: sd_listen_fds hands fds 3..3+n to this process to
            // own; each is open (checked above) and taken exactly once (the
            // variables are gone now), before anything else in the process
            // could have opened or closed these numbers.
            Ok(unsafe { OwnedFd::from_raw_fd(fd) })
        })
        .collect::<io::Result<Vec<_>>>()
        .map(Some)
}
