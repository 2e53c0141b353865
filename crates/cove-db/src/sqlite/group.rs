//! Group commit: the writes of every request a worker runs in one event-loop
//! turn share one transaction, committed once at the end of the turn.
//!
//! An autocommit INSERT pays for its own commit (WAL append, lock calls); a
//! group pays once. The server holds the responses of the requests that
//! joined a group until [`Sqlite::commit_group`] reports it committed, so an
//! acknowledged write is always committed. `db.batch` becomes a SAVEPOINT
//! inside the group. A transaction-control statement the app runs itself
//! (`BEGIN`, `COMMIT`, `SAVEPOINT`, ...) first commits the group, then runs
//! as it would without groups.
//!
//! Reads outside a write group share one read snapshot per turn too: on a WAL
//! file every autocommit read takes and drops a shared lock on the wal-index
//! with two `fcntl` calls (~1.8 µs on the benchmark machine, a fifth of a
//! request), and a deferred `BEGIN` held to the end of the turn pays that
//! once. A write ends the snapshot first; so does any write this process
//! finished since it began (the write lock's release count moved), so a read
//! never misses a write that was acknowledged. A write from another process
//! is seen from the next turn.

use std::collections::VecDeque;

use rusqlite::Connection;

use crate::error::DbError;
use crate::sqlite::conn::Sqlite;
use crate::sqlite::lock::LockHold;
use crate::sqlite::stmt::Kept;
use cove_core::{log, TurnTx};

const NESTED: &str = "cannot start a transaction within a transaction";
const BATCH_LEFT_OPEN: &str = "a db.batch was still open at the end of the turn";
/// How many failed groups are remembered for late waiters.
const FAILED_KEPT: usize = 64;

/// Group-commit bookkeeping of one connection.
#[derive(Debug, Default)]
pub(crate) struct Group {
    pub(crate) enabled: bool,
    /// Paused (`Sqlite::pause_group_commit`): `enabled` as it was before.
    paused_from: Option<bool>,
    /// Our `BEGIN IMMEDIATE` is active.
    pub(crate) open: bool,
    /// `db.batch` savepoint active inside the group.
    pub(crate) in_batch: bool,
    /// Id of the open group, or of the last one.
    pub(crate) gen: u64,
    /// Every group up to this id has finished (committed or failed).
    done_through: u64,
    failed: VecDeque<u64>,
    /// The group a statement ran in since the last `take_touched`.
    touched: Option<u64>,
    /// Reads may share a snapshot (a WAL file: elsewhere they take no lock
    /// calls to save).
    pub(crate) snapshots: bool,
    /// Our deferred `BEGIN` holds a read snapshot, taken when the write
    /// lock's release count was this.
    snapshot: Option<u64>,
    /// The statements that open and end groups and snapshots.
    begin_write: Kept,
    begin_read: Kept,
    commit: Kept,
    /// Writing statements in the open group (`--metrics`).
    writes: u32,
}

impl Group {
    /// End the open group; `failure` says why it did not commit. A failure is
    /// logged with its reason and counted on the write lock: the requests that
    /// joined the group get 503 (`Retry-After`) and no other word of it.
    fn finish(&mut self, hold: &LockHold, failure: Option<&str>) {
        if let Some(why) = failure {
            let so_far = hold.lock().count_commit_failure();
            log::error(&format!(
                "a write group failed to commit: {why}; its requests get 503 \
                 ({so_far} failed so far)"
            ));
            if self.failed.len() == FAILED_KEPT {
                self.failed.pop_front();
            }
            self.failed.push_back(self.gen);
        }
        self.open = false;
        self.in_batch = false;
        self.done_through = self.gen;
    }

    pub(crate) fn touch(&mut self) {
        if self.open {
            self.touched = Some(self.gen);
        }
    }
}

/// Runs a transaction-control statement through the statement cache.
pub(crate) fn control(conn: &Connection, sql: &str) -> Result<(), DbError> {
    let mut stmt = conn.prepare_cached(sql)?;
    stmt.raw_execute()?;
    Ok(())
}

impl Group {
    /// Commit the open group (if any) and release the write lock.
    pub(crate) fn commit(&mut self, conn: &Connection, hold: &mut LockHold) -> bool {
        self.end_snapshot(conn);
        if !self.open {
            return true;
        }
        // A batch cannot be left open across turns; such a group fails.
        let result = if self.in_batch {
            Err(BATCH_LEFT_OPEN.to_owned())
        } else {
            self.commit.run(conn, "COMMIT").map_err(|e| e.to_string())
        };
        if !conn.is_autocommit() {
            let _ = control(conn, "ROLLBACK");
        }
        self.finish(hold, result.as_ref().err().map(String::as_str));
        hold.release_if_idle(conn);
        if cove_core::telemetry::on() {
            crate::metrics::group(self.writes, result.is_ok());
        }
        result.is_ok()
    }

    /// Before a statement runs: open a group for a write, or commit the group
    /// first if the statement controls transactions itself.
    pub(crate) fn before(
        &mut self,
        conn: &Connection,
        hold: &mut LockHold,
        writes: bool,
        controls_tx: bool,
    ) -> Result<(), DbError> {
        if !self.enabled {
            return Ok(());
        }
        if controls_tx {
            self.commit(conn, hold);
            return Ok(());
        }
        if writes {
            self.end_snapshot(conn);
            if !self.open && conn.is_autocommit() {
                self.open_group(conn, hold)?;
                self.writes = 0;
            }
            self.writes += 1;
        } else if self.snapshots && !self.open {
            self.share_snapshot(conn, hold)?;
        }
        self.touch();
        Ok(())
    }

    /// Before a read outside a write group: keep the turn's snapshot if no
    /// write of this process finished since it began, else begin a new one.
    /// An app's own transaction is left alone.
    fn share_snapshot(&mut self, conn: &Connection, hold: &LockHold) -> Result<(), DbError> {
        let released = hold.lock().released();
        match self.snapshot {
            Some(at) if at == released => return Ok(()),
            Some(_) => self.end_snapshot(conn),
            None if !conn.is_autocommit() => return Ok(()),
            None => {}
        }
        self.begin_read.run(conn, "BEGIN")?;
        self.snapshot = Some(released);
        Ok(())
    }

    /// End the read snapshot, if one is held.
    fn end_snapshot(&mut self, conn: &Connection) {
        if self.snapshot.take().is_some() && self.commit.run(conn, "COMMIT").is_err() {
            // A read-only transaction commits; should it not, drop it anyway.
            let _ = control(conn, "ROLLBACK");
        }
    }

    /// Whether a write group or a read snapshot is open until the turn ends.
    pub(crate) fn held(&self) -> bool {
        self.open || self.snapshot.is_some()
    }

    /// After a statement: an error that rolled the whole transaction back
    /// (SQLITE_FULL, `ON CONFLICT ROLLBACK`, ...) ends the group as failed.
    pub(crate) fn after(&mut self, conn: &Connection, hold: &mut LockHold, err: Option<&DbError>) {
        if self.open && conn.is_autocommit() {
            let why = match err {
                Some(e) => format!("a statement failed and SQLite rolled the group back: {e}"),
                None => "SQLite rolled the group back".to_owned(),
            };
            self.finish(hold, Some(&why));
        }
        if self.snapshot.is_some() && conn.is_autocommit() {
            self.snapshot = None; // an error ended it
        }
        if !self.open {
            hold.release_if_idle(conn);
        }
    }

    fn open_group(&mut self, conn: &Connection, hold: &mut LockHold) -> Result<(), DbError> {
        hold.acquire();
        if let Err(e) = self.begin_write.run(conn, "BEGIN IMMEDIATE") {
            hold.release_if_idle(conn);
            return Err(e);
        }
        self.gen += 1;
        self.open = true;
        Ok(())
    }

    /// `db.batch` inside a group: a savepoint.
    pub(crate) fn begin_batch(
        &mut self,
        conn: &Connection,
        hold: &mut LockHold,
    ) -> Result<(), DbError> {
        self.end_snapshot(conn);
        if self.in_batch || (!conn.is_autocommit() && !self.open) {
            return Err(DbError::Transaction(NESTED.to_owned()));
        }
        if !self.open {
            self.open_group(conn, hold)?;
        }
        control(conn, "SAVEPOINT cove_batch")?;
        self.in_batch = true;
        self.touch();
        Ok(())
    }

    pub(crate) fn end_batch(
        &mut self,
        conn: &Connection,
        hold: &mut LockHold,
        commit: bool,
    ) -> Result<(), DbError> {
        self.in_batch = false;
        let result = if commit {
            control(conn, "RELEASE cove_batch").map_err(|e| e.prefixed("COMMIT failed: "))
        } else {
            Ok(())
        };
        if !commit || result.is_err() {
            // Fails only if SQLite already rolled the whole group back.
            let _ = control(conn, "ROLLBACK TO cove_batch");
            let _ = control(conn, "RELEASE cove_batch");
        }
        self.after(conn, hold, result.as_ref().err());
        result
    }
}

impl Sqlite {
    /// Turn group commit on or off (off by default; the server turns it on).
    pub fn set_group_commit(&mut self, on: bool) {
        if !on {
            self.commit_group();
        }
        self.group.enabled = on;
    }

    /// Pause group commit (committing the open group first), or resume it
    /// as it was before the pause (a reload, see `cove_server::Reload`).
    pub fn pause_group_commit(&mut self, paused: bool) {
        match (paused, self.group.paused_from) {
            (true, None) => {
                self.group.paused_from = Some(self.group.enabled);
                self.set_group_commit(false);
            }
            (false, Some(was)) => {
                self.group.paused_from = None;
                self.set_group_commit(was);
            }
            _ => {}
        }
    }

    /// Whether the script has a `db.batch` (explicit transaction) open: a
    /// suspended script must not hold one across other requests.
    pub fn in_batch(&self) -> bool {
        if self.group.enabled {
            self.group.in_batch
        } else {
            self.in_transaction()
        }
    }

    /// Whether a group transaction is open and waiting for [`Sqlite::commit_group`].
    pub fn group_open(&self) -> bool {
        self.group.open
    }

    /// What [`Sqlite::commit_group`] should end at the end of the turn.
    pub fn turn_tx(&self) -> TurnTx {
        if self.group.open {
            TurnTx::Write
        } else if self.group.snapshot.is_some() {
            TurnTx::Read
        } else {
            TurnTx::None
        }
    }

    /// The group the statements since the last call ran in, if any: the
    /// request that ran them must wait for that group's result.
    pub fn take_touched(&mut self) -> Option<u64> {
        self.group.touched.take()
    }

    /// `Some(true)` once group `gen` committed, `Some(false)` if it was rolled
    /// back, `None` while it is still open.
    pub fn group_result(&self, gen: u64) -> Option<bool> {
        (gen <= self.group.done_through).then(|| !self.group.failed.contains(&gen))
    }

    /// Commit the open group (if any) and release the write lock, and end the
    /// read snapshot; returns whether the group committed.
    pub fn commit_group(&mut self) -> bool {
        self.group.commit(&self.conn, &mut self.hold)
    }

    /// After the app file ran: roll back a transaction it left open, then
    /// commit its writes (seeding) before serving starts. Returns whether a
    /// transaction had been left open (and logs it: the same for every runtime).
    pub fn finish_load(&mut self) -> bool {
        let stale = self.rollback_stale();
        if stale {
            cove_core::log::warn("rolled back a transaction the app file left open");
        }
        self.commit_group();
        self.take_touched();
        stale
    }

    /// After a handler call: roll back a transaction it left open (and log
    /// it) and fold the write group its statements ran in into `touched`
    /// (the request's latest). Returns whether a write group or read
    /// snapshot is left open for the end of the turn.
    pub fn finish_call(&mut self, touched: &mut Option<u64>) -> bool {
        if self.rollback_stale() {
            cove_core::log::warn("rolled back a transaction the script left open");
        }
        if let Some(group) = self.take_touched() {
            *touched = Some(touched.map_or(group, |g| g.max(group)));
        }
        self.group.held()
    }
}
