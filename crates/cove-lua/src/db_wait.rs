//! `db.query` / `db.exec` for a database whose queries wait on the network
//! (PostgreSQL): slow functions (suspend.rs) that yield the query's future,
//! so the worker serves other requests while it runs. Where the script
//! cannot suspend (inside `db.batch`, while the app loads, in tests calling
//! functions directly) the future is waited for in place.
//!
//! Results come back in the same packed form as SQLite's (raw/rows.rs).

use mlua::{Function, Lua, MultiValue, Value};

use cove_core::{Job, JobOutput};
use cove_db::{DbError, Origin, ResultSet, Row, Value as DbValue};

use crate::bind::db_cell;
use crate::error::coded;
use crate::suspend::{output, slow_function, Start};

/// The SQL and parameters of a call, as `api` names them in errors.
fn args(lua: &Lua, api: &str, args: &MultiValue) -> mlua::Result<(String, Vec<DbValue>)> {
    let sql = match args.front() {
        Some(Value::String(s)) => s
            .to_str()
            .map_err(|_| mlua::Error::runtime(format!("{api}: the SQL is not valid UTF-8")))?
            .to_string(),
        other => {
            return Err(mlua::Error::runtime(format!(
                "{api}: the SQL must be a string, got {}",
                other.map_or("no value", Value::type_name)
            )))
        }
    };
    let params = match args.get(1) {
        None | Some(Value::Nil) => Vec::new(),
        Some(Value::Table(t)) => {
            // A packed query result passed as parameters: its rows first.
            crate::raw::exec::<()>(lua, t, |s| crate::raw::rows::unpack(s, 1))?;
            let mut out = Vec::with_capacity(t.raw_len());
            for i in 1..=t.raw_len() {
                out.push(match t.raw_get::<Value>(i)? {
                    Value::Nil => DbValue::Null,
                    Value::Boolean(b) => DbValue::Integer(i64::from(b)),
                    Value::Integer(n) => DbValue::Integer(n),
                    Value::Number(n) => DbValue::Real(n),
                    Value::String(s) => DbValue::Text(s.as_bytes().to_vec()),
                    other => {
                        return Err(mlua::Error::runtime(format!(
                            "{api}: parameter {i} is a {}; pass strings, numbers, booleans or nil",
                            other.type_name()
                        )))
                    }
                });
            }
            out
        }
        Some(other) => {
            return Err(mlua::Error::runtime(format!(
                "{api}: parameters must be a table (an array of values), got {}",
                other.type_name()
            )))
        }
    };
    Ok((sql, params))
}

fn finish_query(lua: &Lua, out: JobOutput) -> mlua::Result<Result<MultiValue, String>> {
    let set = match output::<Result<ResultSet, DbError>>(out) {
        Ok(Ok(set)) => set,
        Ok(Err(e)) => return Ok(Err(coded(lua, e.cap("db.query failed")))),
        Err(msg) => return Ok(Err(msg)),
    };
    let names: Vec<&str> = set.columns.iter().map(String::as_str).collect();
    // rows::query pushes exactly one value (the result table).
    let rows: Value = crate::raw::exec(lua, (), |s| {
        let _ = crate::raw::rows::query(s, |each_row| {
            set.rows
                .iter()
                .try_for_each(|r| each_row(&names, &Row::of_values(r)))
        });
    })?;
    Ok(Ok(MultiValue::from_iter([rows])))
}

fn finish_exec(lua: &Lua, out: JobOutput) -> mlua::Result<Result<MultiValue, String>> {
    match output::<Result<(u64, Option<i64>), DbError>>(out) {
        // The INSERT's id is db.last_id() already (set as the answer came).
        Ok(Ok((changed, _))) => Ok(Ok(MultiValue::from_iter([Value::Integer(changed as i64)]))),
        Ok(Err(e)) => Ok(Err(coded(lua, e.cap("db.exec failed")))),
        Err(msg) => Ok(Err(msg)),
    }
}

/// The raw `db_query` and `db_exec` for a waiting backend.
pub(crate) fn add_raw(lua: &Lua, raw: &mlua::Table) -> mlua::Result<()> {
    let (query, exec) = functions(lua, Origin::App)?;
    raw.raw_set("db_query", query)?;
    raw.raw_set("db_exec", exec)
}

/// `db.query` and `db.exec` running their statements as `origin` (the
/// app's, or the stdlib's: modules.rs).
pub(crate) fn functions(lua: &Lua, origin: Origin) -> mlua::Result<(Function, Function)> {
    let query = slow_function(lua, move |lua, a| {
        let (sql, params) = args(lua, "db.query", &a)?;
        let fut = db_cell(lua)?.borrow_mut().query_later(&sql, params, origin);
        match fut {
            Some(fut) => Ok(Start::Job(Job::future(fut), finish_query)),
            None => Err(mlua::Error::runtime("db.query: no waiting backend")),
        }
    })?;
    let exec = slow_function(lua, move |lua, a| {
        let (sql, params) = args(lua, "db.exec", &a)?;
        let fut = db_cell(lua)?.borrow_mut().exec_later(&sql, params, origin);
        match fut {
            Some(fut) => Ok(Start::Job(Job::future(fut), finish_exec)),
            None => Err(mlua::Error::runtime("db.exec: no waiting backend")),
        }
    })?;
    Ok((query, exec))
}
