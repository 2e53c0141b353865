//! Batches (explicit transactions), the stale-transaction guard and shutdown maintenance.

use crate::error::DbError;
use crate::sqlite::conn::Sqlite;

const NESTED: &str = "cannot start a transaction within a transaction";

impl Sqlite {
    /// Takes the write lock, then `BEGIN IMMEDIATE`. Fails if a transaction is already open.
    pub fn begin_batch(&mut self) -> Result<(), DbError> {
        if self.group.enabled {
            return self.group.begin_batch(&self.conn, &mut self.hold);
        }
        if self.in_transaction() {
            return Err(DbError::Transaction(NESTED.to_owned()));
        }
        self.hold.acquire();
        let result = self.run_control("BEGIN IMMEDIATE");
        self.hold.release_if_idle(&self.conn);
        result
    }

    /// `COMMIT`s the batch; if that fails, rolls back and returns `COMMIT failed: <msg>`.
    /// The write lock is released either way (unless even ROLLBACK failed and a transaction is still open).
    pub fn commit_batch(&mut self) -> Result<(), DbError> {
        if self.group.in_batch {
            return self.group.end_batch(&self.conn, &mut self.hold, true);
        }
        let result = self.run_control("COMMIT");
        if result.is_err() && self.in_transaction() {
            // The error being reported is COMMIT's; a failed ROLLBACK leaves the
            // connection in a transaction, which keeps the lock held (see below).
            let _ = self.run_control("ROLLBACK");
        }
        self.hold.release_if_idle(&self.conn);
        result.map_err(|e| e.prefixed("COMMIT failed: "))
    }

    /// `ROLLBACK`s the batch (a no-op if SQLite already rolled it back) and releases the lock.
    pub fn rollback_batch(&mut self) -> Result<(), DbError> {
        if self.group.in_batch {
            return self.group.end_batch(&self.conn, &mut self.hold, false);
        }
        let result = if self.in_transaction() {
            self.run_control("ROLLBACK")
        } else {
            Ok(())
        };
        self.hold.release_if_idle(&self.conn);
        result
    }

    /// Rolls back a transaction left open by a previous request and releases the write lock;
    /// returns whether there was one.
    pub fn rollback_stale(&mut self) -> bool {
        if self.group.in_batch {
            let _ = self.group.end_batch(&self.conn, &mut self.hold, false);
            return true;
        }
        // An open group or read snapshot is not stale: it ends with the turn.
        let stale = self.in_transaction() && !self.group.held();
        if stale {
            // Nothing useful can be done if ROLLBACK itself fails; the lock then stays
            // held because the transaction is still open.
            let _ = self.run_control("ROLLBACK");
        }
        self.hold.release_if_idle(&self.conn);
        stale
    }

    /// `PRAGMA optimize` then `PRAGMA wal_checkpoint(TRUNCATE)`, under the write lock; run at shutdown.
    pub fn optimize_and_checkpoint(&mut self) -> Result<(), DbError> {
        self.commit_group();
        self.as_cove();
        self.hold.acquire();
        let result = self
            .conn
            .execute_batch("PRAGMA optimize; PRAGMA wal_checkpoint(TRUNCATE);");
        self.hold.release_if_idle(&self.conn);
        result.map_err(DbError::from)
    }

    /// Runs a transaction-control statement through the statement cache.
    pub(crate) fn run_control(&self, sql: &str) -> Result<(), DbError> {
        crate::sqlite::group::control(&self.conn, sql)
    }

    /// Whether this `Sqlite` holds the write lock right now (for tests and assertions).
    #[cfg(test)]
    pub(crate) fn holds_write_lock(&self) -> bool {
        self.hold.is_held()
    }
}

impl Drop for Sqlite {
    /// A group still open when its worker stops is committed: its requests
    /// were never answered, but their writes are sound.
    fn drop(&mut self) {
        self.commit_group();
    }
}
