//! The handles: [`AccessLog`] for the server (open, reopen, flush, stop)
//! and a [`WorkerLog`] per worker (log a request).

use std::future::Future;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};
use std::thread::{JoinHandle, Thread};

use super::entry::Entry;
use super::format::Memo;
use super::writer::{self, lock, Output, Pending, Shared, Slot, HANDOFF, MAX_PENDING, START};
use super::{format, Format, Target};

/// The access log: its file and the thread that writes it. Clones share
/// them; the thread stops (after writing every line logged so far) at
/// [`AccessLog::flush_and_stop`] or when the last handle, this or a
/// [`WorkerLog`], is dropped.
#[derive(Clone)]
pub struct AccessLog {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    writer: Thread,
    join: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessLog")
            .field("format", &self.format())
            .finish_non_exhaustive()
    }
}

impl AccessLog {
    /// Open `target` (appending; a file is created `rw-r-----`) and start
    /// the writer thread, `cove-access-log`.
    ///
    /// Call it before the kernel sandbox starts: the file is opened here,
    /// and reopened later by the writer thread, which is spawned here.
    /// Landlock restricts the thread that enables it and the threads it
    /// creates afterwards, so a thread spawned earlier keeps the access
    /// it needs to reopen the path after a rotation.
    pub fn open(target: Target, format: Format) -> io::Result<AccessLog> {
        Self::open_limited(target, format, MAX_PENDING)
    }

    pub(super) fn open_limited(
        target: Target,
        format: Format,
        max_pending: usize,
    ) -> io::Result<AccessLog> {
        let out = Output::open(&target)?;
        let shared = Arc::new(Shared::new(format, max_pending));
        let join = writer::spawn(shared.clone(), out)?;
        Ok(AccessLog {
            inner: Arc::new(Inner {
                shared,
                writer: join.thread().clone(),
                join: Mutex::new(Some(join)),
            }),
        })
    }

    /// A handle for one worker, with a buffer of its own.
    pub fn worker(&self) -> WorkerLog {
        let format = self.inner.shared.format;
        let slot = Arc::new(Slot(Mutex::new(Pending {
            buf: Vec::with_capacity(START),
            memo: Memo::new(format),
            nudged: false,
            closed: false,
        })));
        lock(&self.inner.shared.slots).push(slot.clone());
        WorkerLog {
            slot,
            format,
            max_pending: self.inner.shared.max_pending,
            inner: self.inner.clone(),
        }
    }

    pub fn format(&self) -> Format {
        self.inner.shared.format
    }

    /// Lines dropped so far: logged while the writer was far behind, or
    /// not written (a write error).
    pub fn dropped(&self) -> u64 {
        self.inner.shared.dropped.load(Ordering::Relaxed)
    }

    /// Have the writer close the file and open its path again (after
    /// logrotate renamed it). Returns at once; lines logged after this
    /// returns go to the new file, earlier ones to either.
    pub fn reopen(&self) {
        self.inner.shared.reopen.store(true, Ordering::Release);
        self.inner.writer.unpark();
    }

    /// Wait until every line logged before this call is written.
    pub fn flush(&self) {
        let shared = &self.inner.shared;
        let mut f = lock(&shared.flushes);
        f.asked += 1;
        let want = f.asked;
        self.inner.writer.unpark();
        while f.done < want && !f.stopped {
            f = shared
                .flushed
                .wait(f)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Write every line logged so far and stop the writer thread (at the
    /// server's exit). Lines logged afterwards are not written.
    pub fn flush_and_stop(&self) {
        self.inner.stop();
    }

    /// Reopen the file on each SIGUSR1 (logrotate's
    /// `postrotate kill -USR1 <pid>`).
    ///
    /// The handler is registered now, so call this inside a tokio runtime
    /// (in `block_on`, or after `Runtime::enter`), and early: until it is,
    /// SIGUSR1 ends the process. Spawn or select the returned future; it
    /// ends when the access log is gone.
    pub fn reopen_on_sigusr1(&self) -> io::Result<impl Future<Output = ()> + Send + 'static> {
        use tokio::signal::unix::{signal, SignalKind};
        let mut usr1 = signal(SignalKind::user_defined1())?;
        // Weak: waiting for signals must not keep the writer running.
        let log: Weak<Inner> = Arc::downgrade(&self.inner);
        Ok(async move {
            while usr1.recv().await.is_some() {
                match log.upgrade() {
                    Some(inner) => AccessLog { inner }.reopen(),
                    None => return,
                }
            }
        })
    }
}

impl Inner {
    fn stop(&self) {
        self.shared.stop.store(true, Ordering::Release);
        self.writer.unpark();
        if let Some(join) = lock(&self.join).take() {
            let _ = join.join();
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One worker's handle: formats each request's line on the worker and
/// leaves it for the writer thread.
///
/// Why a buffer per worker and not a channel of lines: a line sent on a
/// channel costs an allocation and a send (each over 50 ns) and moves a
/// cache line between the worker and the writer per request. Appending to
/// the worker's own buffer reuses its memory, and the mutex around it is
/// uncontended but for the writer's take every 100 ms: two atomic
/// operations, ~20 ns.
pub struct WorkerLog {
    slot: Arc<Slot>,
    format: Format,
    max_pending: usize,
    inner: Arc<Inner>,
}

impl WorkerLog {
    /// Log one request. Never waits on the disk: if the writer is far
    /// behind, the line is dropped and counted.
    pub fn log(&self, entry: &Entry<'_>) {
        let mut p = lock(&self.slot.0);
        if p.buf.len() >= self.max_pending {
            drop(p);
            self.inner.shared.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let Pending { buf, memo, .. } = &mut *p;
        match self.format {
            Format::Combined => format::combined(buf, memo, entry),
            Format::Json => format::json(buf, memo, entry),
        }
        if p.buf.len() >= HANDOFF && !p.nudged {
            p.nudged = true;
            drop(p);
            self.inner.writer.unpark();
        }
    }
}

impl Drop for WorkerLog {
    fn drop(&mut self) {
        // The writer takes what is left, then forgets the slot.
        lock(&self.slot.0).closed = true;
    }
}
