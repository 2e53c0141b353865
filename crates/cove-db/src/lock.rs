//! The process-wide write lock: one per database file, shared by every worker's `Db`.
//!
//! SQLite allows one writer. Rather than letting workers sleep in SQLite's busy handler
//! (which polls in milliseconds), a `Db` takes this lock before it steps a writing statement
//! and keeps it while its connection has a transaction open.
//!
//! The lock is a FIFO ticket lock built on a `parking_lot` mutex and condvar. It hands out
//! no guard: the holding `Db` remembers that it holds it (see [`LockHold`]), which keeps
//! `Db: Send` (a `parking_lot` guard is not `Send` without the `send_guard` feature).

use parking_lot::{Condvar, Mutex};
use std::sync::Arc;

#[derive(Default)]
struct Tickets {
    /// Ticket handed to the next caller of `acquire`.
    next: u64,
    /// Ticket that currently owns the lock (or may take it).
    serving: u64,
}

#[derive(Default)]
struct Shared {
    tickets: Mutex<Tickets>,
    turn: Condvar,
}

/// Write lock for one database file; clone it into every worker's [`crate::Db`] of that file.
#[derive(Clone, Default)]
pub struct WriteLock(Arc<Shared>);

impl WriteLock {
    /// Blocks until this caller owns the lock; callers are served first come, first served.
    fn acquire(&self) {
        let mut t = self.0.tickets.lock();
        let mine = t.next;
        t.next += 1;
        while t.serving != mine {
            self.0.turn.wait(&mut t);
        }
    }

    /// Hands the lock to the next waiter. Only the owner may call this.
    fn release(&self) {
        let mut t = self.0.tickets.lock();
        t.serving += 1;
        drop(t);
        self.0.turn.notify_all();
    }
}

#[cfg(test)]
impl WriteLock {
    /// Callers blocked in `acquire` right now (the owner not counted).
    pub(crate) fn waiters(&self) -> u64 {
        let t = self.0.tickets.lock();
        (t.next - t.serving).saturating_sub(1)
    }
}

impl std::fmt::Debug for WriteLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.0.tickets.lock();
        f.debug_struct("WriteLock")
            .field("queued", &(t.next - t.serving))
            .finish()
    }
}

/// One `Db`'s relation to its `WriteLock`: whether it currently owns it.
pub(crate) struct LockHold {
    lock: WriteLock,
    held: bool,
}

impl LockHold {
    /// Not holding `lock` yet.
    pub(crate) fn new(lock: WriteLock) -> LockHold {
        LockHold { lock, held: false }
    }

    /// Takes the lock unless this `Db` already holds it.
    pub(crate) fn acquire(&mut self) {
        if !self.held {
            self.lock.acquire();
            self.held = true;
        }
    }

    /// Gives the lock back if held.
    pub(crate) fn release(&mut self) {
        if self.held {
            self.held = false;
            self.lock.release();
        }
    }

    /// Gives the lock back if held and `conn` has no transaction open.
    pub(crate) fn release_if_idle(&mut self, conn: &rusqlite::Connection) {
        if conn.is_autocommit() {
            self.release();
        }
    }

    /// Whether this `Db` owns the lock now.
    pub(crate) fn is_held(&self) -> bool {
        self.held
    }
}

impl Drop for LockHold {
    fn drop(&mut self) {
        self.release();
    }
}
