//! `db.query/exec/last_id`: the checks of the SQL and its parameters, and
//! the statement run on the worker's connection ([`Scope::db`]) as the
//! scope's origin (the app's, or the stdlib's with its right to the
//! reserved tables: settled by which module the function was bound into).
//!
//! On SQLite a query's rows go straight into the binding's own builder as
//! the database reads them ([`EachRow`]: Lua's packed result, JS's array of
//! objects); on PostgreSQL a statement is a job whose rows arrive whole,
//! as a [`CapValue::Rows`] the binding writes through the same builder.

use cove_core::{CapError, Job};
use cove_db::{DbError, Dialect, ResultSet, Row, Value as DbValue};

use super::{CapValue, Runtime, Scope, Started};
use crate::db::{DbFn, DbOp};

/// Where a query's rows go as the database reads them.
pub type EachRow<'r> = &'r mut dyn FnMut(&[&str], &Row<'_>) -> Result<(), DbError>;

/// The name a call is made by, in messages.
fn api(f: &DbFn, scope: &Scope) -> &'static str {
    match (f.op, scope.is_async) {
        (DbOp::Query, false) => "db.query",
        (DbOp::Query, true) => "db.queryAsync",
        (DbOp::Exec, false) => "db.exec",
        (DbOp::Exec, true) => "db.execAsync",
        (DbOp::LastId, _) if scope.runtime == Runtime::Lua => "db.last_id",
        (DbOp::LastId, _) => "db.lastId",
    }
}

fn argument(message: String) -> CapError {
    CapError::new("db.argument", message)
}

/// The SQL, argument 1.
fn sql_of(api: &str, rt: Runtime, v: Option<CapValue>) -> Result<String, CapError> {
    match v {
        Some(CapValue::Str(bytes)) => String::from_utf8(bytes)
            .map_err(|_| argument(format!("{api}: the SQL is not valid UTF-8"))),
        other => Err(argument(format!(
            "{api}: the SQL must be a string, got {}",
            other.unwrap_or(CapValue::Nothing).type_name(rt)
        ))),
    }
}

/// One parameter as it binds (docs/api.md, "db parameters").
fn param(api: &str, rt: Runtime, i: usize, v: CapValue) -> Result<DbValue, CapError> {
    Ok(match v {
        CapValue::Nothing | CapValue::Null => DbValue::Null,
        CapValue::Bool(b) => DbValue::Integer(i64::from(b)),
        CapValue::Int(n) => DbValue::Integer(n),
        CapValue::Num(n) => DbValue::Real(n),
        CapValue::Str(text) => DbValue::Text(text),
        CapValue::Bytes(bytes) => DbValue::Blob(bytes),
        other if rt == Runtime::Lua => {
            return Err(argument(format!(
                "{api}: parameter {i} is a {}; pass strings, numbers, booleans or nil",
                other.type_name(rt)
            )))
        }
        other => {
            return Err(argument(format!(
                "{api}: parameter {i} is {}; pass strings, numbers, booleans, null or an ArrayBuffer/Uint8Array",
                other.type_name(rt)
            )))
        }
    })
}

/// The parameters, argument 2: absent, or a list (Lua: a table; an empty
/// one has no items to tell it from a record).
fn params_of(api: &str, rt: Runtime, v: Option<CapValue>) -> Result<Vec<DbValue>, CapError> {
    let items = match v {
        None | Some(CapValue::Nothing | CapValue::Null) => return Ok(Vec::new()),
        Some(CapValue::List(items)) => items,
        Some(CapValue::Record(fields)) if rt == Runtime::Lua && fields.is_empty() => Vec::new(),
        Some(other) if rt == Runtime::Lua => {
            return Err(argument(format!(
                "{api}: parameters must be a table (an array of values), got {}",
                other.type_name(rt)
            )))
        }
        Some(other) => {
            return Err(argument(format!(
                "{api}: params must be an array, got {}",
                other.type_name(rt)
            )))
        }
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| param(api, rt, i + 1, v))
        .collect()
}

/// Run the call. With `each_row` a query's rows on SQLite are written
/// there and the result is [`CapValue::Nothing`]; without it they come
/// back as [`CapValue::Rows`], as a waiting backend's always do.
pub(super) fn start(
    f: &DbFn,
    scope: &Scope,
    args: Vec<CapValue>,
    each_row: Option<EachRow<'_>>,
) -> Result<Started, CapError> {
    let api = api(f, scope);
    let Some(cell) = scope.db else {
        return Err(CapError::new(
            "db.unavailable",
            format!("{api}: no database here"),
        ));
    };
    if f.op == DbOp::LastId {
        return Ok(Started::Done(CapValue::Int(cell.borrow().last_id())));
    }
    let rt = scope.runtime;
    let mut args = args.into_iter();
    let sql = sql_of(api, rt, args.next())?;
    let params = params_of(api, rt, args.next())?;
    let origin = scope.origin;
    // Hull's words for a failed statement, also from a job.
    let what = match f.op {
        DbOp::Query => "db.query failed",
        _ => "db.exec failed",
    };
    let failed = |e: DbError| e.cap(what);
    let mut db = cell.borrow_mut();
    if db.dialect() == Dialect::Postgres {
        let job = match f.op {
            DbOp::Query => db.query_later(&sql, params, origin).map(|fut| {
                Job::future(async move { fut.await.map(CapValue::Rows).map_err(|e| e.cap(what)) })
            }),
            _ => db.exec_later(&sql, params, origin).map(|fut| {
                Job::future(async move {
                    // The INSERT's id is db.last_id() already (set as the answer came).
                    fut.await
                        .map(|(n, _)| CapValue::Int(n as i64))
                        .map_err(|e| e.cap(what))
                })
            }),
        };
        return job
            .map(Started::Job)
            .ok_or_else(|| CapError::new("internal", format!("{api}: no waiting backend")));
    }
    match (f.op, each_row) {
        (DbOp::Query, Some(each_row)) => {
            db.query(&sql, &params, origin, each_row).map_err(failed)?;
            Ok(Started::Done(CapValue::Nothing))
        }
        (DbOp::Query, None) => {
            let mut set = ResultSet::default();
            db.query(&sql, &params, origin, |cols, row| {
                if set.columns.is_empty() {
                    set.columns = cols.iter().map(|c| c.to_string()).collect();
                }
                set.rows
                    .push((0..row.len()).map(|i| row.get(i).into()).collect());
                Ok(())
            })
            .map_err(failed)?;
            Ok(Started::Done(CapValue::Rows(set)))
        }
        _ => {
            let changed = db.exec(&sql, &params, origin).map_err(failed)?;
            Ok(Started::Done(CapValue::Int(changed as i64)))
        }
    }
}
