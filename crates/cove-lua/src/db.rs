//! `db.*` (Hull §5). `query` and `exec` are Lua C functions that raise
//! their failures at the caller's line (res.rs): through mlua's callback
//! machinery and a Lua wrapper, converting the arguments and the result
//! cost ~2.5k instructions per call. The batch steps are raw halves the
//! prelude wraps.
#![allow(unsafe_code)]

use std::ffi::c_int;

use mlua::{ffi, Function, Lua, Table, Value};

use cove_db::{Db, DbError, Dialect, Origin, Value as DbValue};

use crate::bind::{db_cell, run_returning, type_name};
use crate::error::coded;
use crate::globals::{fail, Outcome};
use crate::view::{of_type, stack_bytes, View};
use crate::vm::unlimited_raw;

/// The parameters at stack index `idx` (absolute): nil, none, or an array.
///
/// # Safety
/// The heap cap is lifted (a packed table is unpacked first) and 2 stack
/// slots are free.
unsafe fn params(state: *mut ffi::lua_State, idx: c_int) -> Result<Vec<DbValue>, String> {
    match ffi::lua_type(state, idx) {
        ffi::LUA_TNIL | ffi::LUA_TNONE => return Ok(Vec::new()),
        ffi::LUA_TTABLE => {}
        t => {
            return Err(format!(
                "parameters must be a table (an array of values), got {}",
                type_name(t)
            ))
        }
    }
    crate::rows::unpack(state, idx);
    let n = ffi::lua_rawlen(state, idx);
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        let t = ffi::lua_rawgeti(state, idx, i as ffi::lua_Integer);
        let value = match of_type(state, -1, t) {
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
        ffi::lua_settop(state, -2);
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
        // SAFETY: as the app's (add_raw).
        unsafe {
            Ok((
                lua.create_c_function(db_call::<true, true>)?,
                lua.create_c_function(db_call::<false, true>)?,
            ))
        }
    } else {
        crate::db_wait::functions(lua, Origin::Stdlib)
    }
}

/// `db.query(sql, params)` (`QUERY`) or `db.exec(sql, params)`: pushes the
/// rows or the number of changed rows.
unsafe extern "C-unwind" fn db_call<const QUERY: bool, const STDLIB: bool>(
    state: *mut ffi::lua_State,
) -> c_int {
    let api = if QUERY { "db.query" } else { "db.exec" };
    run_returning(state, || {
        let sql = match ffi::lua_type(state, 1) {
            ffi::LUA_TSTRING => std::str::from_utf8(stack_bytes(state, 1))
                .map_err(|_| format!("{api}: the SQL is not valid UTF-8"))?,
            t => {
                return Err(format!(
                    "{api}: the SQL must be a string, got {}",
                    type_name(t)
                ))
            }
        };
        if ffi::lua_checkstack(state, 8) == 0 {
            return Err(format!("{api}: stack overflow"));
        }
        // Reading a packed params table and pushing the rows allocate: with
        // the cap lifted they cannot raise (a real out-of-memory aborts).
        unlimited_raw(state, |lua| lifted::<QUERY, STDLIB>(state, lua, api, sql))
            .map_err(|e| format!("{api}: {e}"))?
    })
}

/// [`db_call`]'s work, with the heap cap lifted.
unsafe fn lifted<const QUERY: bool, const STDLIB: bool>(
    state: *mut ffi::lua_State,
    lua: &Lua,
    api: &str,
    sql: &str,
) -> Result<c_int, String> {
    let params = params(state, 2).map_err(|e| format!("{api}: {e}"))?;
    let origin = origin_of(STDLIB);
    let result = (|| {
        let cell = db_cell(lua).map_err(|e| DbError::Callback(e.to_string()))?;
        let mut db = cell.borrow_mut();
        if QUERY {
            crate::rows::query(state, |each_row| {
                db.query(sql, &params, origin, |cols, row| each_row(cols, row))
            })?;
        } else {
            let changes = db.exec(sql, &params, origin)?;
            ffi::lua_pushinteger(state, changes as ffi::lua_Integer);
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
        // SAFETY: they read their arguments from the stack, push one result,
        // and raise only when no Rust value is live (bind::run_returning).
        raw.raw_set("db_query", unsafe {
            lua.create_c_function(db_call::<true, false>)?
        })?;
        raw.raw_set("db_exec", unsafe {
            lua.create_c_function(db_call::<false, false>)?
        })?;
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
