//! `Db`: one SQLite connection per worker, with the shared write lock and statement cache.

use crate::error::{too_many_params, DbError};
use crate::group::Group;
use crate::lock::{LockHold, WriteLock};
use crate::sql_text;
use crate::value::{Row, Value};
use rusqlite::{CachedStatement, Connection, OpenFlags, Statement};
use std::path::Path;

/// Prepared statements kept per connection (LRU, keyed by SQL text).
pub(crate) const STATEMENT_CACHE_CAPACITY: usize = 128;

/// Applied to every read-write connection, `:memory:` included. busy_timeout comes first so
/// that switching a fresh file to WAL waits for, rather than fails against, another opener.
const PRAGMAS: &str = "PRAGMA busy_timeout = 5000;
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    PRAGMA foreign_keys = ON;
    PRAGMA cache_size = -16384;
    PRAGMA temp_store = MEMORY;
    PRAGMA mmap_size = 268435456;
    PRAGMA wal_autocheckpoint = 1000;";

/// Applied to read-only connections (the journal mode is the file's own).
const READONLY_PRAGMAS: &str = "PRAGMA busy_timeout = 5000;
    PRAGMA foreign_keys = ON;
    PRAGMA cache_size = -16384;
    PRAGMA temp_store = MEMORY;
    PRAGMA mmap_size = 268435456;";

const SEVERAL_IN_QUERY: &str = "several statements in one db.query; pass one statement per call";
const SEVERAL_WITH_PARAMS: &str = "several statements with parameters in one db.exec; \
     split them into one db.exec per statement, or put them in a migration";

/// Who issued the SQL: app code may not touch the reserved `_hull_*` tables, the stdlib may.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The application's own code.
    App,
    /// Cove's standard library (sessions, migrations, ...).
    Stdlib,
}

/// One SQLite connection, owned by one worker thread.
pub struct Db {
    // Field order matters: the connection closes (rolling back any open transaction)
    // before `hold` drops and hands the write lock to the next worker.
    pub(crate) conn: Connection,
    pub(crate) hold: LockHold,
    pub(crate) group: Group,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.conn.path())
            .field("in_transaction", &self.in_transaction())
            .field("holds_write_lock", &self.hold.is_held())
            .finish()
    }
}

/// What preparing a SQL string produced.
enum Prepared<'c> {
    /// Exactly one statement, from the cache.
    One(CachedStatement<'c>),
    /// Several statements; only `exec` without parameters may run them.
    Several,
    /// Whitespace and comments only.
    Blank,
}

impl Db {
    /// Opens (creating if needed) a read-write database; `lock` must be shared by every `Db` of `path`.
    pub fn open(path: &Path, lock: WriteLock) -> Result<Db, DbError> {
        let conn = Connection::open(path).map_err(|e| open_error(path, e))?;
        Db::configure(conn, lock, PRAGMAS).map_err(|e| open_error(path, e))
    }

    /// Opens an existing database read-only (for tooling such as `cove migrate --status`).
    pub fn open_readonly(path: &Path) -> Result<Db, DbError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
        Db::configure(conn, WriteLock::default(), READONLY_PRAGMAS).map_err(|e| open_error(path, e))
    }

    fn configure(conn: Connection, lock: WriteLock, pragmas: &str) -> rusqlite::Result<Db> {
        conn.execute_batch(pragmas)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_CAPACITY);
        Ok(Db {
            conn,
            hold: LockHold::new(lock),
            group: Group::default(),
        })
    }

    /// Runs one statement and calls `each_row(column_names, row)` per result row.
    ///
    /// Statements without result columns (DDL, INSERT without RETURNING) run and yield no
    /// rows. An error from `each_row` stops the query and is returned.
    pub fn query<F>(
        &mut self,
        sql: &str,
        params: &[Value],
        origin: Origin,
        mut each_row: F,
    ) -> Result<(), DbError>
    where
        F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>,
    {
        check_origin(sql, origin)?;
        let Db { conn, hold, group } = self;
        match prepare(conn, sql)? {
            Prepared::One(mut stmt) => run(conn, hold, group, &mut stmt, params, |s| {
                query_rows(s, &mut each_row)
            }),
            Prepared::Blank => check_no_params(params),
            Prepared::Several => Err(DbError::Sql(SEVERAL_IN_QUERY.to_owned())),
        }
    }

    /// Runs a statement to completion (rows are discarded) and returns how many rows it changed.
    ///
    /// DDL and SELECT return 0. Several `;`-separated statements run in order when `params`
    /// is empty, returning the rows changed by all of them together.
    pub fn exec(&mut self, sql: &str, params: &[Value], origin: Origin) -> Result<u64, DbError> {
        check_origin(sql, origin)?;
        let Db { conn, hold, group } = self;
        let before = conn.total_changes();
        match prepare(conn, sql)? {
            Prepared::One(mut stmt) => {
                run(conn, hold, group, &mut stmt, params, |s| {
                    let mut rows = s.raw_query();
                    while rows.next()?.is_some() {}
                    Ok(())
                })?;
                // changes() is stale after DDL/SELECT; total_changes() tells whether this
                // statement changed anything. changes() then excludes rows changed by triggers.
                Ok(if conn.total_changes() == before {
                    0
                } else {
                    conn.changes()
                })
            }
            Prepared::Blank => check_no_params(params).map(|()| 0),
            Prepared::Several if params.is_empty() => {
                // They may control transactions: run them outside any group.
                group.before(conn, hold, true, true)?;
                hold.acquire();
                let result = conn.execute_batch(sql);
                hold.release_if_idle(conn);
                result?;
                Ok(conn.total_changes() - before)
            }
            Prepared::Several => Err(DbError::Params(SEVERAL_WITH_PARAMS.to_owned())),
        }
    }

    /// Rowid of the most recent successful INSERT on this connection.
    pub fn last_id(&self) -> i64 {
        self.conn.last_insert_rowid()
    }

    /// True while a transaction is open (the connection is not in autocommit mode).
    pub fn in_transaction(&self) -> bool {
        !self.conn.is_autocommit()
    }
}

fn open_error(path: &Path, e: rusqlite::Error) -> DbError {
    DbError::Open(format!(
        "cannot open database {}: {}",
        path.display(),
        DbError::from(e)
    ))
}

fn check_origin(sql: &str, origin: Origin) -> Result<(), DbError> {
    if origin == Origin::App && sql_text::mentions_reserved(sql) {
        Err(DbError::Reserved)
    } else {
        Ok(())
    }
}

fn check_no_params(params: &[Value]) -> Result<(), DbError> {
    if params.is_empty() {
        Ok(())
    } else {
        Err(DbError::Params(too_many_params(0, params.len())))
    }
}

fn prepare<'c>(conn: &'c Connection, sql: &str) -> Result<Prepared<'c>, DbError> {
    match conn.prepare_cached(sql) {
        // Empty SQL prepares to a null statement, which must not be stepped.
        Ok(stmt) if stmt.column_count() == 0 && stmt.readonly() && sql_text::is_blank(sql) => {
            Ok(Prepared::Blank)
        }
        Ok(stmt) => Ok(Prepared::One(stmt)),
        Err(rusqlite::Error::MultipleStatement) => Ok(Prepared::Several),
        // rusqlite prepares the tail to see whether it is empty, so a later statement that
        // needs an earlier one (CREATE TABLE t; INSERT INTO t ...) fails here instead.
        Err(_) if sql_text::has_several_statements(sql) => Ok(Prepared::Several),
        Err(e) => Err(e.into()),
    }
}

/// Binds `params`, takes the write lock if the statement may write or control a
/// transaction, runs `body`, and gives the lock back once no transaction is open.
pub(crate) fn run<T>(
    conn: &Connection,
    hold: &mut LockHold,
    group: &mut Group,
    stmt: &mut Statement<'_>,
    params: &[Value],
    body: impl FnOnce(&mut Statement<'_>) -> Result<T, DbError>,
) -> Result<T, DbError> {
    bind(stmt, params)?;
    // Read-only statements without result columns are BEGIN/SAVEPOINT/COMMIT and friends:
    // an app's own BEGIN holds the lock from the start, so its first write can't hit BUSY.
    let controls_tx = stmt.readonly() && stmt.column_count() == 0;
    let writes = !stmt.readonly();
    group.before(conn, hold, writes, controls_tx)?;
    if writes || controls_tx {
        hold.acquire();
    }
    let result = body(stmt); // the statement is reset when `body` returns
    group.after(conn, hold);
    result
}

fn bind(stmt: &mut Statement<'_>, params: &[Value]) -> Result<(), DbError> {
    let want = stmt.parameter_count();
    if params.len() > want {
        return Err(DbError::Params(too_many_params(want, params.len())));
    }
    for (i, value) in params.iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, value)?;
    }
    Ok(())
}

/// Steps `stmt`, passing each row with the column names (read once, after the first step,
/// when SQLite has re-prepared the statement for any schema change).
fn query_rows<F>(stmt: &mut Statement<'_>, each_row: &mut F) -> Result<(), DbError>
where
    F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>,
{
    let mut rows = stmt.raw_query();
    let Some(first) = rows.next()? else {
        return Ok(());
    };
    let owned = {
        let s: &Statement<'_> = first.as_ref();
        (0..s.column_count())
            .map(|i| s.column_name(i).map(str::to_owned))
            .collect::<Result<Vec<String>, _>>()?
    };
    let names: Vec<&str> = owned.iter().map(String::as_str).collect();
    each_row(&names, &Row::new(first, names.len()))?;
    while let Some(row) = rows.next()? {
        each_row(&names, &Row::new(row, names.len()))?;
    }
    Ok(())
}
