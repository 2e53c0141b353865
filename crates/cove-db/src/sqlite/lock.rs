//! The process-wide write lock: one per database file, shared by every worker's `Db`.
//!
//! SQLite allows one writer. Rather than letting workers sleep in SQLite's busy handler
//! (which polls in milliseconds), a `Db` takes this lock before it steps a writing statement
//! and keeps it while its connection has a transaction open.
//!
//! The lock is a `parking_lot` mutex: a worker that releases and writes again right away
//! may take it again without a thread hand-off (measured: a strict FIFO hand-off cost a
//! context switch per insert and a third of the throughput), and parking_lot's eventual
//! fairness keeps a waiting worker from starving. The holding `Db` keeps the guard
//! (`send_guard` makes it `Send`, so `Db` stays `Send`).
//!
//! Every release also counts a finished write: a worker that keeps one read
//! snapshot for its turn (see `group.rs`) starts a new one when the count has
//! moved, so it never misses a write this process has acknowledged.

use parking_lot::{lock_api::ArcMutexGuard, Mutex, RawMutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Default)]
struct Shared {
    mutex: Arc<Mutex<()>>,
    /// Callers inside `acquire`, for tests that need to see a writer queued.
    waiting: AtomicU64,
    /// Releases so far: each one ended a write transaction (or a writer's
    /// turn with the lock), committed or not.
    released: AtomicU64,
    /// Write groups that failed to commit (disk full, I/O error, ...).
    commit_failures: AtomicU64,
}

/// Write lock for one database file; clone it into every worker's [`Sqlite`](crate::sqlite::conn::Sqlite) of that file.
#[derive(Clone, Default)]
pub struct WriteLock(Arc<Shared>);

type Guard = ArcMutexGuard<RawMutex, ()>;

impl WriteLock {
    /// Blocks until this caller owns the lock.
    fn acquire(&self) -> Guard {
        if let Some(g) = self.0.mutex.try_lock_arc() {
            return g;
        }
        self.0.waiting.fetch_add(1, Ordering::SeqCst);
        let started = cove_core::telemetry::on().then(std::time::Instant::now);
        let g = self.0.mutex.lock_arc();
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
        if let Some(started) = started {
            crate::metrics::lock_wait(started);
        }
        g
    }

    /// How many times the lock has been released: unchanged since a read
    /// snapshot began means no write of this process committed since.
    pub(crate) fn released(&self) -> u64 {
        self.0.released.load(Ordering::Acquire)
    }

    /// How many write groups of this database failed to commit since the
    /// process started (each is logged with its reason).
    pub fn commit_failures(&self) -> u64 {
        self.0.commit_failures.load(Ordering::Relaxed)
    }

    /// Counts one more failed commit; returns the count.
    pub(crate) fn count_commit_failure(&self) -> u64 {
        self.0.commit_failures.fetch_add(1, Ordering::Relaxed) + 1
    }
}

#[cfg(test)]
impl WriteLock {
    /// Callers blocked in `acquire` right now (the owner not counted).
    pub(crate) fn waiters(&self) -> u64 {
        self.0.waiting.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for WriteLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteLock")
            .field("locked", &self.0.mutex.is_locked())
            .finish()
    }
}

/// One `Db`'s relation to its `WriteLock`: whether it currently owns it.
pub(crate) struct LockHold {
    lock: WriteLock,
    guard: Option<Guard>,
}

impl LockHold {
    /// Not holding `lock` yet.
    pub(crate) fn new(lock: WriteLock) -> LockHold {
        LockHold { lock, guard: None }
    }

    /// Takes the lock unless this `Db` already holds it.
    pub(crate) fn acquire(&mut self) {
        if self.guard.is_none() {
            self.guard = Some(self.lock.acquire());
        }
    }

    /// Gives the lock back if held. The transaction has ended by now, so a
    /// reader that sees the new count also sees what it wrote.
    pub(crate) fn release(&mut self) {
        if let Some(guard) = self.guard.take() {
            self.lock.0.released.fetch_add(1, Ordering::Release);
            drop(guard);
        }
    }

    /// The lock this `Db` takes for writes.
    pub(crate) fn lock(&self) -> &WriteLock {
        &self.lock
    }

    /// Gives the lock back if held and `conn` has no transaction open.
    pub(crate) fn release_if_idle(&mut self, conn: &rusqlite::Connection) {
        // Asked after every script call: most hold no lock, and then need
        // no call into SQLite.
        if self.guard.is_some() && conn.is_autocommit() {
            self.release();
        }
    }

    /// Whether this `Db` owns the lock now.
    pub(crate) fn is_held(&self) -> bool {
        self.guard.is_some()
    }
}

impl Drop for LockHold {
    fn drop(&mut self) {
        self.release();
    }
}
