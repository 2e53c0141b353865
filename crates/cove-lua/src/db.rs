//! `db.*` (Hull §5). `query` and `exec` are Lua C functions that raise
//! their failures at the caller's line (res.rs): through mlua's callback
//! machinery and a Lua wrapper, converting the arguments and the result
//! cost ~2.5k instructions per call. The batch steps are raw halves the
//! prelude wraps.

use std::ffi::c_int;

use mlua::{Function, Lua, Table, Value};

use cove_db::{Db, DbError, Dialect, Origin, Value as DbValue};

use crate::bind::db_cell;
use crate::error::coded;
use crate::globals::{fail, Outcome};
use crate::raw::{self, CFn, Lifted, Stack, View};

/// The parameters, argument `idx`: nil, none, or an array (a packed query
/// result is unpacked first).
fn params(s: &mut Lifted<'_, '_>, idx: c_int) -> Result<Vec<DbValue>, String> {
    let Some(t) = s.arg_table(idx) else {
        return match s.arg(idx) {
            View::Nil => Ok(Vec::new()),
            other => Err(format!(
                "parameters must be a table (an array of values), got {}",
                other.type_name()
            )),
        };
    };
    raw::rows::unpack(s, idx);
    let n = s.raw_len(idx);
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        let value = match s.arg_geti(t, i as i64) {
            View::Nil => Ok(DbValue::Null),
            View::Bool(b) => Ok(DbValue::Integer(i64::from(b))),
            View::Int(n) => Ok(DbValue::Integer(n)),
            View::Float(f) => Ok(DbValue::Real(f)),
            View::Str(bytes) => Ok(DbValue::Text(bytes.to_vec())),
            other => Err(format!(
                "parameter {i} is a {}; pass strings, numbers, booleans or nil",
                other.type_name()
            )),
        };
        s.pop(1);
        out.push(value?);
    }
    Ok(out)
}

/// Who runs a statement: the app's `db` or the stdlib's (the `db` a stdlib
/// module sees, modules.rs). Decided by which function was called, before
/// the statement runs.
const fn origin_of(stdlib: bool) -> Origin {
    if stdlib {
        Origin::Stdlib
    } else {
        Origin::App
    }
}

/// The stdlib's `query` and `exec`: the same calls with the stdlib's right
/// to the reserved tables.
pub(crate) fn stdlib_functions(lua: &Lua) -> mlua::Result<(Function, Function)> {
    if db_cell(lua)?.borrow().dialect() == Dialect::Sqlite {
        Ok((
            raw::function::<DbCall<true, true>>(lua)?,
            raw::function::<DbCall<false, true>>(lua)?,
        ))
    } else {
        crate::db_wait::functions(lua, Origin::Stdlib)
    }
}

/// `db.query(sql, params)` (`QUERY`) or `db.exec(sql, params)`: pushes the
/// rows or the number of changed rows.
struct DbCall<const QUERY: bool, const STDLIB: bool>;
impl<const QUERY: bool, const STDLIB: bool> CFn for DbCall<QUERY, STDLIB> {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let api = if QUERY { "db.query" } else { "db.exec" };
        let sql = match s.arg(1) {
            View::Str(bytes) => std::str::from_utf8(bytes)
                .map_err(|_| format!("{api}: the SQL is not valid UTF-8"))?,
            other => {
                return Err(format!(
                    "{api}: the SQL must be a string, got {}",
                    other.type_name()
                ))
            }
        };
        if !s.reserve(8) {
            return Err(format!("{api}: stack overflow"));
        }
        // Reading a packed params table and pushing the rows allocate: with
        // the cap lifted they cannot raise (a real out-of-memory aborts).
        s.lifted(|s| lifted::<QUERY, STDLIB>(s, api, sql))
            .map_err(|e| format!("{api}: {e}"))?
    }
}

/// [`DbCall`]'s work, with the heap cap lifted.
fn lifted<const QUERY: bool, const STDLIB: bool>(
    s: &mut Lifted<'_, '_>,
    api: &str,
    sql: &str,
) -> Result<c_int, String> {
    let lua = s.lua();
    let params = params(s, 2).map_err(|e| format!("{api}: {e}"))?;
    let origin = origin_of(STDLIB);
    let result = (|| {
        let cell = db_cell(lua).map_err(|e| DbError::Callback(e.to_string()))?;
        let mut db = cell.borrow_mut();
        if QUERY {
            raw::rows::query(s, |each_row| {
                db.query(sql, &params, origin, |cols, row| each_row(cols, row))
            })?;
        } else {
            let changes = db.exec(sql, &params, origin)?;
            s.push_int(changes as i64);
        }
        Ok::<(), DbError>(())
    })();
    result
        .map(|()| 1)
        .map_err(|e| coded(lua, e.cap(&format!("{api} failed"))))
}

fn batch_step(lua: &Lua, step: fn(&mut Db) -> Result<(), DbError>) -> mlua::Result<Outcome> {
    let result = step(&mut db_cell(lua)?.borrow_mut());
    match result {
        Ok(()) => Ok((true, Value::Nil)),
        Err(e) => fail(lua, format!("db.batch: {e}")),
    }
}

pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    let dialect = db_cell(lua)?.borrow().dialect();
    if dialect == Dialect::Sqlite {
        raw.raw_set("db_query", raw::function::<DbCall<true, false>>(lua)?)?;
        raw.raw_set("db_exec", raw::function::<DbCall<false, false>>(lua)?)?;
    } else {
        crate::db_wait::add_raw(lua, raw)?;
    }
    raw.raw_set("db_dialect", dialect.name())?;
    raw.raw_set(
        "db_last_id",
        lua.create_function(|lua, ()| Ok(db_cell(lua)?.borrow().last_id()))?,
    )?;
    raw.raw_set(
        "db_begin",
        lua.create_function(|lua, ()| batch_step(lua, Db::begin_batch))?,
    )?;
    raw.raw_set(
        "db_commit",
        lua.create_function(|lua, ()| batch_step(lua, Db::commit_batch))?,
    )?;
    raw.raw_set(
        "db_rollback",
        lua.create_function(|lua, ()| batch_step(lua, Db::rollback_batch))?,
    )
}
