//! `Db`: the database a worker's scripts use — SQLite (embedded, the
//! default) or PostgreSQL (`--db postgres://…`) — behind one API. Every
//! method is the backend's own; what one backend has no use for (SQLite's
//! group commit on PostgreSQL, which commits each statement) is a no-op.

use std::future::Future;
use std::path::Path;

use cove_core::{AppFiles, TurnTx, TurnUse};

use crate::audit::{self, Write};
use crate::error::DbError;
use crate::inspect::{ResultSet, TableInfo};
use crate::migrations::{Dialect, MigrationReport, MigrationStatus};
use crate::pg::Pg;
use crate::sqlite::conn::Sqlite;
use crate::sqlite::lock::WriteLock;
use crate::value::{Row, Value};

/// Who issued the SQL: app code may not touch the reserved `_hull_*` tables, the stdlib may
/// (and, with the audit log on, its writes are logged: audit.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The application's own code.
    App,
    /// Cove's standard library (sessions, migrations, ...).
    Stdlib,
}

/// One worker's database connection.
#[derive(Debug)]
pub struct Db(Backend);

// One per worker: boxing the larger SQLite side would add a pointer hop to
// every query for no saving worth having.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Backend {
    Sqlite(Sqlite),
    Postgres(Pg),
}

/// Forwards to the backend; `$pg` is what PostgreSQL does instead, if it differs.
macro_rules! each {
    ($self:ident, $db:ident => $both:expr) => {
        match &$self.0 {
            Backend::Sqlite($db) => $both,
            Backend::Postgres($db) => $both,
        }
    };
    (mut $self:ident, $db:ident => $both:expr) => {
        match &mut $self.0 {
            Backend::Sqlite($db) => $both,
            Backend::Postgres($db) => $both,
        }
    };
}

impl Db {
    /// Opens (creating if needed) a read-write SQLite database; `lock` must be shared by
    /// every `Db` of `path`.
    pub fn open(path: &Path, lock: WriteLock) -> Result<Db, DbError> {
        Sqlite::open(path, lock).map(|db| Db(Backend::Sqlite(db)))
    }

    /// Opens an existing SQLite database read-only (for tooling such as `cove migrate status`).
    pub fn open_readonly(path: &Path) -> Result<Db, DbError> {
        Sqlite::open_readonly(path).map(|db| Db(Backend::Sqlite(db)))
    }

    /// Connects to PostgreSQL at `url` (`postgres://user:pass@host:port/db`).
    /// Errors name the URL without its password.
    pub fn connect(url: &str) -> Result<Db, DbError> {
        Pg::connect(url, None).map(|db| Db(Backend::Postgres(db)))
    }

    /// [`Db::connect`] with `schema` as the session's search_path: its tables
    /// are the ones unqualified names reach (`cove test` gives each suite one).
    pub fn connect_in_schema(url: &str, schema: &str) -> Result<Db, DbError> {
        Pg::connect(url, Some(schema)).map(|db| Db(Backend::Postgres(db)))
    }

    /// Whether `target` (a `--db` value) names a PostgreSQL database rather than a file.
    pub fn is_postgres_url(target: &str) -> bool {
        target.starts_with("postgres://") || target.starts_with("postgresql://")
    }

    /// Which SQL this backend speaks.
    pub fn dialect(&self) -> Dialect {
        match self.0 {
            Backend::Sqlite(_) => Dialect::Sqlite,
            Backend::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs one statement and calls `each_row(column_names, row)` per result row.
    ///
    /// Statements without result columns (DDL, INSERT without RETURNING) run and yield no
    /// rows. An error from `each_row` stops the query and is returned.
    #[inline]
    pub fn query<F>(
        &mut self,
        sql: &str,
        params: &[Value],
        origin: Origin,
        each_row: F,
    ) -> Result<(), DbError>
    where
        F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>,
    {
        if origin == Origin::Stdlib && cove_core::audit::enabled() {
            return self.query_logged(sql, params, each_row);
        }
        if cove_core::telemetry::on() {
            let started = std::time::Instant::now();
            let result = each!(mut self, db => db.query(sql, params, origin, each_row));
            crate::metrics::statement(started, result.is_ok());
            return result;
        }
        each!(mut self, db => db.query(sql, params, origin, each_row))
    }

    /// Runs a statement to completion (rows are discarded) and returns how many rows it changed.
    ///
    /// DDL and SELECT return 0. Several `;`-separated statements run in order when `params`
    /// is empty, returning the rows changed by all of them together.
    #[inline]
    pub fn exec(&mut self, sql: &str, params: &[Value], origin: Origin) -> Result<u64, DbError> {
        if origin == Origin::Stdlib && cove_core::audit::enabled() {
            return self.exec_logged(sql, params);
        }
        if cove_core::telemetry::on() {
            let started = std::time::Instant::now();
            let result = each!(mut self, db => db.exec(sql, params, origin));
            crate::metrics::statement(started, result.is_ok());
            return result;
        }
        each!(mut self, db => db.exec(sql, params, origin))
    }

    /// [`Db::query`] for the stdlib with the audit log on (out of line: the
    /// app's statements do not carry it).
    #[cold]
    #[inline(never)]
    fn query_logged<F>(&mut self, sql: &str, params: &[Value], each_row: F) -> Result<(), DbError>
    where
        F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>,
    {
        let audit = Write::of("db.query", Origin::Stdlib, sql, params.len());
        let result = each!(mut self, db => db.query(sql, params, Origin::Stdlib, each_row));
        if let Some(w) = audit {
            w.done(result.as_ref().map(|()| None));
        }
        result
    }

    /// [`Db::exec`] for the stdlib with the audit log on.
    #[cold]
    #[inline(never)]
    fn exec_logged(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let audit = Write::of("db.exec", Origin::Stdlib, sql, params.len());
        let result = each!(mut self, db => db.exec(sql, params, Origin::Stdlib));
        if let Some(w) = audit {
            w.done(result.as_ref().map(|n| Some(*n)));
        }
        result
    }

    /// A query that does not hold the worker while it waits: `None` on SQLite (whose
    /// queries do not wait on a network), else the future of the whole result.
    pub fn query_later(
        &mut self,
        sql: &str,
        params: Vec<Value>,
        origin: Origin,
    ) -> Option<impl Future<Output = Result<ResultSet, DbError>> + Send + 'static> {
        match &mut self.0 {
            Backend::Sqlite(_) => None,
            Backend::Postgres(pg) => {
                let audit = Write::of("db.query", origin, sql, params.len());
                let fut = pg.query_later(sql, params, origin);
                Some(audit::after(audit, fut, |_| None))
            }
        }
    }

    /// [`Db::exec`] that does not hold the worker (`None` on SQLite): the future of
    /// the rows changed and, after an INSERT, the id it made, which [`Db::last_id`]
    /// reports from the moment the future is done.
    pub fn exec_later(
        &mut self,
        sql: &str,
        params: Vec<Value>,
        origin: Origin,
    ) -> Option<impl Future<Output = Result<(u64, Option<i64>), DbError>> + Send + 'static> {
        match &mut self.0 {
            Backend::Sqlite(_) => None,
            Backend::Postgres(pg) => {
                let audit = Write::of("db.exec", origin, sql, params.len());
                let fut = pg.exec_later(sql, params, origin);
                Some(audit::after(audit, fut, |(n, _)| Some(*n)))
            }
        }
    }

    /// Id of the row the most recent INSERT made (SQLite's rowid; on PostgreSQL the
    /// value the INSERT took from a sequence: an identity or serial key).
    pub fn last_id(&self) -> i64 {
        each!(self, db => db.last_id())
    }

    /// True while a transaction is open.
    pub fn in_transaction(&self) -> bool {
        each!(self, db => db.in_transaction())
    }

    /// Starts a `db.batch` transaction. Fails if one is already open.
    pub fn begin_batch(&mut self) -> Result<(), DbError> {
        each!(mut self, db => db.begin_batch())
    }

    /// Commits the batch; if that fails, rolls back and returns `COMMIT failed: <msg>`.
    pub fn commit_batch(&mut self) -> Result<(), DbError> {
        each!(mut self, db => db.commit_batch())
    }

    /// Rolls the batch back (a no-op if the database already did).
    pub fn rollback_batch(&mut self) -> Result<(), DbError> {
        each!(mut self, db => db.rollback_batch())
    }

    /// Rolls back a transaction left open by a previous request; returns whether there was one.
    pub fn rollback_stale(&mut self) -> bool {
        each!(mut self, db => db.rollback_stale())
    }

    /// Whether the script has a `db.batch` open: a suspended script must not hold one
    /// across other requests.
    pub fn in_batch(&self) -> bool {
        each!(self, db => db.in_batch())
    }

    /// At shutdown: SQLite's `PRAGMA optimize` and WAL checkpoint; nothing on PostgreSQL.
    pub fn optimize_and_checkpoint(&mut self) -> Result<(), DbError> {
        match &mut self.0 {
            Backend::Sqlite(db) => db.optimize_and_checkpoint(),
            Backend::Postgres(_) => Ok(()),
        }
    }

    /// Turn SQLite's group commit on or off (PostgreSQL commits each statement).
    pub fn set_group_commit(&mut self, on: bool) {
        if let Backend::Sqlite(db) = &mut self.0 {
            db.set_group_commit(on);
        }
    }

    /// Pause group commit (committing the open group and ending the read
    /// snapshot), or resume it as it was before the pause.
    pub fn pause_group_commit(&mut self, paused: bool) {
        if let Backend::Sqlite(db) = &mut self.0 {
            db.pause_group_commit(paused);
        }
    }

    /// Whether a group transaction is open and waiting for [`Db::commit_group`].
    pub fn group_open(&self) -> bool {
        matches!(&self.0, Backend::Sqlite(db) if db.group_open())
    }

    /// What [`Db::commit_group`] should end at the end of the turn.
    #[inline]
    pub fn turn_tx(&self) -> TurnTx {
        match &self.0 {
            Backend::Sqlite(db) => db.turn_tx(),
            Backend::Postgres(_) => TurnTx::None,
        }
    }

    /// The group the statements since the last call ran in, if any.
    pub fn take_touched(&mut self) -> Option<u64> {
        match &mut self.0 {
            Backend::Sqlite(db) => db.take_touched(),
            Backend::Postgres(_) => None,
        }
    }

    /// `Some(true)` once group `gen` committed, `Some(false)` if it was rolled back.
    pub fn group_result(&self, gen: u64) -> Option<bool> {
        match &self.0 {
            Backend::Sqlite(db) => db.group_result(gen),
            Backend::Postgres(_) => Some(true),
        }
    }

    /// Commit the open write group, if any; returns whether it committed.
    pub fn commit_group(&mut self) -> bool {
        match &mut self.0 {
            Backend::Sqlite(db) => db.commit_group(),
            Backend::Postgres(_) => true,
        }
    }

    /// After the app file ran: roll back a transaction it left open (and log it), and
    /// commit its writes before serving starts. Returns whether one had been left open.
    pub fn finish_load(&mut self) -> bool {
        match &mut self.0 {
            Backend::Sqlite(db) => db.finish_load(),
            Backend::Postgres(db) => db.finish_load(),
        }
    }

    /// After a handler call: roll back a transaction it left open, fold the write
    /// group its statements ran in into `turn.touched` (the request's latest), and
    /// note in `turn.left_open` whether a group or read snapshot is left open for
    /// the end of the turn.
    #[inline]
    pub fn finish_call(&mut self, turn: &mut TurnUse) {
        turn.left_open = match &mut self.0 {
            Backend::Sqlite(db) => db.finish_call(&mut turn.touched),
            Backend::Postgres(db) => db.finish_call(),
        };
    }

    /// Tables and their columns, ordered by name (tools: `cove db schema`).
    pub fn schema(&mut self) -> Result<Vec<TableInfo>, DbError> {
        each!(mut self, db => db.schema())
    }

    /// Whether `sql` (one statement) may change the database.
    pub fn statement_writes(&mut self, sql: &str) -> Result<bool, DbError> {
        each!(mut self, db => db.statement_writes(sql))
    }

    /// Runs one statement and returns all its rows (tools: `cove db query`).
    pub fn query_all(&mut self, sql: &str) -> Result<ResultSet, DbError> {
        each!(mut self, db => db.query_all(sql))
    }

    /// Applies pending migrations (see [`crate::migrations`] for the file layout).
    /// On PostgreSQL, processes starting at once apply each file exactly once.
    pub fn migrate(&mut self, app: &AppFiles) -> Result<MigrationReport, DbError> {
        each!(mut self, db => db.migrate(app))
    }

    /// Every migration file of the app, with when it was applied.
    pub fn migration_status(&mut self, app: &AppFiles) -> Result<Vec<MigrationStatus>, DbError> {
        each!(mut self, db => db.migration_status(app))
    }

    /// Whether this `Db` holds SQLite's write lock right now.
    #[cfg(test)]
    pub(crate) fn holds_write_lock(&self) -> bool {
        matches!(&self.0, Backend::Sqlite(db) if db.holds_write_lock())
    }
}
