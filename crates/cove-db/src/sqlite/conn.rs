//! `Sqlite`: one SQLite connection per worker, with the shared write lock and statement cache.

use crate::error::{too_many_params, DbError};
use crate::sqlite::group::Group;
use crate::sqlite::guard::{Guard, Rights};
use crate::sqlite::lock::LockHold;
use crate::sqlite::stmt::{from_rusqlite, Prepared, Running, Stmt, StmtCache};
use crate::value::{Row, Value};
use crate::Origin;
use rusqlite::Connection;

/// Prepared statements kept per connection (LRU, keyed by SQL text).
pub(crate) const STATEMENT_CACHE_CAPACITY: usize = 128;

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
    /// Who the statements run for (the connection's authorizer).
    pub(crate) guard: Guard,
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
        match self.run_one(sql, params, origin, |r| query_rows(r, &mut each_row)) {
            Ok(Prepared::One(())) => Ok(()),
            Ok(Prepared::Blank) => check_no_params(params),
            Ok(Prepared::Several) => Err(DbError::Sql(SEVERAL_IN_QUERY.to_owned())),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// Runs a statement to completion (rows are discarded) and returns how many rows it changed.
    ///
    /// DDL and SELECT return 0. Several `;`-separated statements run in order when `params`
    /// is empty, returning the rows changed by all of them together.
    pub fn exec(&mut self, sql: &str, params: &[Value], origin: Origin) -> Result<u64, DbError> {
        let before = self.conn.total_changes();
        let ran = self.run_one(sql, params, origin, |r| {
            while r.step()? {}
            Ok(())
        });
        let ran = ran.map_err(|e| self.failed(e))?;
        let Sqlite {
            conn,
            hold,
            group,
            guard,
            ..
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
                // Counting them prepared the first two; they are asked about again one by one.
                guard.clear_denial();
                let result = conn.execute_batch(sql);
                hold.release_if_idle(conn);
                if let Err(e) = result {
                    let e = from_rusqlite(conn, e);
                    return Err(self.failed(e));
                }
                Ok(conn.total_changes() - before)
            }
            Prepared::Several => Err(DbError::Params(SEVERAL_WITH_PARAMS.to_owned())),
        }
    }

    /// Prepares `sql` through the statement cache and, if it is one statement, runs `body`
    /// on it (see [`run`]) with the rights of `origin`; several statements and blank SQL
    /// are only reported.
    fn run_one<T>(
        &mut self,
        sql: &str,
        params: &[Value],
        origin: Origin,
        body: impl FnOnce(&Running<'_>) -> Result<T, DbError>,
    ) -> Result<Prepared<T>, DbError> {
        let Sqlite {
            stmts,
            conn,
            hold,
            group,
            guard,
        } = self;
        guard.begin(origin.into());
        let stmt = match stmts.prepare(conn, sql, origin, guard)? {
            Prepared::One(stmt) => stmt,
            Prepared::Several => return Ok(Prepared::Several),
            Prepared::Blank => return Ok(Prepared::Blank),
        };
        let result = run(conn, hold, group, stmt, params, body);
        // SQLite prepares a statement again after a schema change, inside a step.
        if origin == Origin::Stdlib && guard.granted() {
            stmt.app_ok.set(false);
        }
        result.map(Prepared::One)
    }

    /// The error a caller sees for `err`: the guard's reason if it refused the
    /// statement. A storage fault is noted for the request, which then gets 503
    /// with `Retry-After` unless the script handles the error.
    #[cold]
    pub(crate) fn failed(&self, err: DbError) -> DbError {
        let err = self.guard.explain(err);
        if let DbError::Unavailable(_) = err {
            cove_core::fault::note_unavailable();
        }
        err
    }

    /// The statements that follow run with Cove's own rights (maintenance, tools).
    pub(crate) fn as_cove(&self) {
        self.guard.begin(Rights::Internal);
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
    group.after(conn, hold, result.as_ref().err());
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
