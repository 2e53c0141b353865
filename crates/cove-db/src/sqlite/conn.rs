//! `Sqlite`: one SQLite connection per worker, with the shared write lock and statement cache.

use crate::error::{too_many_params, DbError};
use crate::sql_text;
use crate::sqlite::group::Group;
use crate::sqlite::lock::{LockHold, WriteLock};
use crate::sqlite::stmt::{Prepared, Running, Stmt, StmtCache};
use crate::value::{Row, Value};
use crate::Origin;
use rusqlite::{Connection, OpenFlags};
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

/// One SQLite connection, owned by one worker thread.
pub struct Sqlite {
    // Field order matters: the statements (the cache's and the group's) are finalized
    // before their connection closes, and the connection closes (rolling back any open
    // transaction) before `hold` drops and hands the write lock to the next worker.
    pub(crate) stmts: StmtCache,
    pub(crate) group: Group,
    pub(crate) conn: Connection,
    pub(crate) hold: LockHold,
}

impl std::fmt::Debug for Sqlite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sqlite")
            .field("path", &self.conn.path())
            .field("in_transaction", &self.in_transaction())
            .field("holds_write_lock", &self.hold.is_held())
            .finish()
    }
}

impl Sqlite {
    /// Opens (creating if needed) a read-write database; `lock` must be shared by every `Sqlite` of `path`.
    pub fn open(path: &Path, lock: WriteLock) -> Result<Sqlite, DbError> {
        let conn = Connection::open(path).map_err(|e| open_error(path, e))?;
        let mut db = Sqlite::configure(conn, lock, PRAGMAS).map_err(|e| open_error(path, e))?;
        let mode: String = db
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| open_error(path, e))?;
        db.group.snapshots = mode.eq_ignore_ascii_case("wal");
        Ok(db)
    }

    /// Opens an existing database read-only (for tooling such as `cove migrate --status`).
    pub fn open_readonly(path: &Path) -> Result<Sqlite, DbError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
        Sqlite::configure(conn, WriteLock::default(), READONLY_PRAGMAS)
            .map_err(|e| open_error(path, e))
    }

    fn configure(conn: Connection, lock: WriteLock, pragmas: &str) -> rusqlite::Result<Sqlite> {
        conn.execute_batch(pragmas)?;
        Ok(Sqlite {
            stmts: StmtCache::new(STATEMENT_CACHE_CAPACITY),
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
        match self.run_one(sql, params, |r| query_rows(r, &mut each_row))? {
            Prepared::One(()) => Ok(()),
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
        let before = self.conn.total_changes();
        let ran = self.run_one(sql, params, |r| {
            while r.step()? {}
            Ok(())
        })?;
        let Sqlite {
            conn, hold, group, ..
        } = self;
        match ran {
            // changes() is stale after DDL/SELECT; total_changes() tells whether this
            // statement changed anything. changes() then excludes rows changed by triggers.
            Prepared::One(()) => Ok(if conn.total_changes() == before {
                0
            } else {
                conn.changes()
            }),
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

    /// Prepares `sql` through the statement cache and, if it is one statement, runs `body`
    /// on it (see [`run`]); several statements and blank SQL are only reported.
    fn run_one<T>(
        &mut self,
        sql: &str,
        params: &[Value],
        body: impl FnOnce(&Running<'_>) -> Result<T, DbError>,
    ) -> Result<Prepared<T>, DbError> {
        let Sqlite {
            stmts,
            conn,
            hold,
            group,
        } = self;
        Ok(match stmts.prepare(conn, sql)? {
            Prepared::One(stmt) => Prepared::One(run(conn, hold, group, stmt, params, body)?),
            Prepared::Several => Prepared::Several,
            Prepared::Blank => Prepared::Blank,
        })
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
    // SQLite's own words for a missing directory name neither it nor the fix.
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let why = match dir {
        Some(d) if !d.is_dir() => {
            format!("directory {} does not exist; create it first", d.display())
        }
        _ => DbError::from(e).to_string(),
    };
    DbError::Open(format!("cannot open database {}: {why}", path.display()))
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

/// Binds `params`, takes the write lock if the statement may write or control a
/// transaction, runs `body`, and gives the lock back once no transaction is open.
pub(crate) fn run<T>(
    conn: &Connection,
    hold: &mut LockHold,
    group: &mut Group,
    stmt: &Stmt,
    params: &[Value],
    body: impl FnOnce(&Running<'_>) -> Result<T, DbError>,
) -> Result<T, DbError> {
    let want = stmt.parameter_count();
    if params.len() > want {
        return Err(DbError::Params(too_many_params(want, params.len())));
    }
    let running = stmt.start(params)?;
    // Read-only statements without result columns are BEGIN/SAVEPOINT/COMMIT and friends:
    // an app's own BEGIN holds the lock from the start, so its first write can't hit BUSY.
    let controls_tx = stmt.readonly() && stmt.column_count() == 0;
    let writes = !stmt.readonly();
    group.before(conn, hold, writes, controls_tx)?;
    if writes || controls_tx {
        hold.acquire();
    }
    let result = body(&running);
    drop(running); // reset before the group may commit
    group.after(conn, hold);
    result
}

/// Steps `stmt`, passing each row with the column names (read once, after the first step,
/// when SQLite has re-prepared the statement for any schema change).
fn query_rows<F>(running: &Running<'_>, each_row: &mut F) -> Result<(), DbError>
where
    F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>,
{
    if !running.step()? {
        return Ok(());
    }
    let stmt = running.stmt();
    let names = (0..stmt.column_count())
        .map(|i| stmt.column_name(i))
        .collect::<Result<Vec<&str>, _>>()?;
    let row = Row::new(running, names.len());
    loop {
        each_row(&names, &row)?;
        if !running.step()? {
            return Ok(());
        }
    }
}
