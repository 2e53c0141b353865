//! The writer thread: every worker's pending lines go to the file from
//! here, so no worker waits on the disk.
//!
//! A round takes each worker's buffer (swapping in an empty one under the
//! worker's mutex), reopens the file if asked, writes the buffers, and
//! answers the flushes asked before it began. Rounds run every
//! [`FLUSH_EVERY`], when a worker's buffer passes [`HANDOFF`] bytes, and
//! when asked (flush, reopen, stop). Lines of different workers may be out
//! of time order in the file; each line is whole.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use cove_core::log;

use super::format::Memo;
use super::{Format, Target};

/// The longest a line waits in a worker's buffer (plus a round's writing).
pub(super) const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// A worker's buffer past this wakes the writer early. Large: at 130k
/// requests a second a 16 KiB hand-off woke the writer (a futex call on
/// the worker) and wrote (a syscall on the writer) 2,300 times a second;
/// the 100 ms round takes a busy worker's ~4 MiB anyway.
pub(super) const HANDOFF: usize = 256 * 1024;
/// A worker's buffer starts this large, and grows with its traffic.
pub(super) const START: usize = 16 * 1024;
/// A worker's buffer past this (the writer far behind) drops new lines.
pub(super) const MAX_PENDING: usize = 8 * 1024 * 1024;
/// Emptied buffers up to this capacity are given back to the workers; a
/// larger one (a burst) is freed.
const KEEP_CAPACITY: usize = 4 * HANDOFF;
/// How often the dropped lines and write errors are reported, at most.
const REPORT_EVERY: Duration = Duration::from_secs(1);

/// What the handles and the writer thread share.
pub(super) struct Shared {
    pub(super) format: Format,
    pub(super) max_pending: usize,
    pub(super) slots: Mutex<Vec<Arc<Slot>>>,
    pub(super) dropped: AtomicU64,
    pub(super) reopen: AtomicBool,
    pub(super) stop: AtomicBool,
    pub(super) flushes: Mutex<Flushes>,
    pub(super) flushed: Condvar,
}

/// One worker's lines not yet taken by the writer.
pub(super) struct Slot(pub(super) Mutex<Pending>);

pub(super) struct Pending {
    pub(super) buf: Vec<u8>,
    pub(super) memo: Memo,
    /// The writer was woken for this buffer already.
    pub(super) nudged: bool,
    /// Its `WorkerLog` is gone: the slot goes once emptied.
    pub(super) closed: bool,
}

/// Flush rounds asked for and done; `stopped` once the thread is gone.
#[derive(Default)]
pub(super) struct Flushes {
    pub(super) asked: u64,
    pub(super) done: u64,
    pub(super) stopped: bool,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a buffer leaves at worst a partial line.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(super) fn new(format: Format, max_pending: usize) -> Shared {
        Shared {
            format,
            max_pending,
            slots: Mutex::new(Vec::new()),
            dropped: AtomicU64::new(0),
            reopen: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            flushes: Mutex::new(Flushes::default()),
            flushed: Condvar::new(),
        }
    }
}

/// Where the lines go.
pub(super) enum Output {
    Stdout,
    File { path: PathBuf, file: File },
}

impl Output {
    pub(super) fn open(target: &Target) -> io::Result<Output> {
        Ok(match target {
            Target::Stdout => Output::Stdout,
            Target::File(path) => Output::File {
                file: open_file(path)?,
                path: path.clone(),
            },
        })
    }

    fn reopen(&mut self) {
        if let Output::File { path, file } = self {
            match open_file(path) {
                Ok(f) => *file = f,
                Err(e) => log::error(&format!(
                    "access log: cannot reopen {}: {e}; still writing to the old file",
                    path.display()
                )),
            }
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            // Batches end in a newline, so stdout's line buffering passes
            // each on in one write.
            Output::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(buf)?;
                out.flush()
            }
            Output::File { file, .. } => file.write_all(buf),
        }
    }

    fn name(&self) -> String {
        match self {
            Output::Stdout => "stdout".into(),
            Output::File { path, .. } => path.display().to_string(),
        }
    }
}

/// Appending (a shared file, logrotate's `copytruncate`), created
/// `rw-r-----` if missing.
fn open_file(path: &std::path::Path) -> io::Result<File> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o640)
        .open(path)
}

pub(super) fn spawn(shared: Arc<Shared>, out: Output) -> io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name("cove-access-log".into())
        .spawn(move || run(&shared, out))
}

/// Marks the writer gone when it returns or panics, so no flush waits on
/// it forever.
struct Gone<'a>(&'a Shared);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        lock(&self.0.flushes).stopped = true;
        self.0.flushed.notify_all();
    }
}

fn run(shared: &Shared, mut out: Output) {
    let _gone = Gone(shared);
    let mut batch = Vec::new();
    let mut spare = Vec::new();
    let mut report = Report::default();
    loop {
        // Read before the buffers are taken: what was logged before a
        // stop or flush was asked is in this round.
        let stopping = shared.stop.load(Ordering::Acquire);
        let asked = lock(&shared.flushes).asked;
        take(shared, &mut batch, &mut spare);
        // After the take: a line logged after `reopen()` returned is in
        // the new file.
        if shared.reopen.swap(false, Ordering::AcqRel) {
            out.reopen();
        }
        for mut buf in batch.drain(..) {
            if let Err(e) = out.write(&buf) {
                let lines = memchr::memchr_iter(b'\n', &buf).count() as u64;
                shared.dropped.fetch_add(lines, Ordering::Relaxed);
                report.error(&out, &e);
            }
            buf.clear();
            if buf.capacity() <= KEEP_CAPACITY {
                spare.push(buf);
            }
        }
        report.dropped(shared, stopping);
        {
            let mut f = lock(&shared.flushes);
            f.done = f.done.max(asked);
            shared.flushed.notify_all();
        }
        if stopping {
            return;
        }
        thread::park_timeout(FLUSH_EVERY);
    }
}

/// Swap every worker's pending lines out into `batch`.
fn take(shared: &Shared, batch: &mut Vec<Vec<u8>>, spare: &mut Vec<Vec<u8>>) {
    lock(&shared.slots).retain(|slot| {
        let mut p = lock(&slot.0);
        p.nudged = false;
        if !p.buf.is_empty() {
            let fresh = spare.pop().unwrap_or_else(|| Vec::with_capacity(START));
            batch.push(std::mem::replace(&mut p.buf, fresh));
        }
        !p.closed
    });
}

/// Reports of dropped lines and write errors, at most one of each a second.
#[derive(Default)]
struct Report {
    dropped: u64,
    dropped_at: Option<Instant>,
    error_at: Option<Instant>,
}

fn due(at: Option<Instant>) -> bool {
    at.is_none_or(|t| t.elapsed() >= REPORT_EVERY)
}

impl Report {
    fn dropped(&mut self, shared: &Shared, last: bool) {
        let total = shared.dropped.load(Ordering::Relaxed);
        if total > self.dropped && (last || due(self.dropped_at)) {
            log::warn(&format!(
                "access log: dropped {} lines",
                total - self.dropped
            ));
            self.dropped = total;
            self.dropped_at = Some(Instant::now());
        }
    }

    fn error(&mut self, out: &Output, e: &io::Error) {
        if due(self.error_at) {
            log::error(&format!("access log: cannot write {}: {e}", out.name()));
            self.error_at = Some(Instant::now());
        }
    }
}
