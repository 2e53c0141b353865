//! `--access-log [stdout|FILE]` with `--access-log-format combined|json`:
//! one line per request, with its id, route pattern, status, bytes,
//! duration and worker.
//!
//! Each worker formats its requests' lines into a buffer of its own
//! ([`WorkerLog`]); one thread, `cove-access-log`, takes the buffers at
//! least every 100 ms and writes them, so the request path never waits on
//! the disk. [`AccessLog::reopen`] (on SIGUSR1:
//! [`AccessLog::reopen_on_sigusr1`]) reopens the file after logrotate
//! renamed it; [`AccessLog::flush_and_stop`] (or dropping the last handle)
//! writes what is left at exit. The line formats are described in
//! `format.rs`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

mod clock;
mod entry;
mod format;
mod handle;
pub mod request_id;
mod text;
mod writer;

#[cfg(test)]
mod tests;

pub use entry::Entry;
pub use handle::{AccessLog, WorkerLog};

/// A line's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Apache's and nginx's `combined`, then ` rid=… route=… dur_ms=… w=…`.
    Combined,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, thiserror::Error)]
#[error("unknown access log format {0:?} (expected combined or json)")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        match s {
            "combined" => Ok(Format::Combined),
            "json" => Ok(Format::Json),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Combined => "combined",
            Format::Json => "json",
        })
    }
}

/// Where the lines go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Stdout,
    File(PathBuf),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Stdout => f.write_str("stdout"),
            Target::File(path) => write!(f, "{}", path.display()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("empty access log target (expected stdout or a file path)")]
pub struct EmptyTarget;

impl FromStr for Target {
    type Err = EmptyTarget;

    /// `stdout`, or a file's path (`./stdout` for a file of that name).
    fn from_str(s: &str) -> Result<Target, EmptyTarget> {
        match s {
            "" => Err(EmptyTarget),
            "stdout" => Ok(Target::Stdout),
            path => Ok(Target::File(PathBuf::from(path))),
        }
    }
}
