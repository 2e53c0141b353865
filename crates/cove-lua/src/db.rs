//! The raw halves of `db.*` (Hull §5); the prelude wraps them so failures
//! are plain-string errors at the caller's line.

use mlua::{Lua, Table, Value};

use cove_db::{Db, DbError, Origin, Value as DbValue};

use crate::globals::{fail, Outcome};
use crate::vm::unlimited;

fn params(lua: &Lua, lua_params: Option<Table>) -> Result<Vec<DbValue>, String> {
    let Some(t) = lua_params else {
        return Ok(Vec::new());
    };
    crate::rows::plain(lua, &t).map_err(|e| e.to_string())?;
    let n = t.raw_len();
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        let v: Value = t.raw_get(i).map_err(|e| e.to_string())?;
        out.push(match v {
            Value::Nil => DbValue::Null,
            Value::Boolean(b) => DbValue::Integer(i64::from(b)),
            Value::Integer(i) => DbValue::Integer(i),
            Value::Number(f) => DbValue::Real(f),
            Value::String(s) => DbValue::Text(s.as_bytes().to_vec()),
            other => {
                return Err(format!(
                    "parameter {i} is a {}; pass strings, numbers, booleans or nil",
                    other.type_name()
                ))
            }
        });
    }
    Ok(out)
}

/// Run `f` as app code; if that hits the reserved namespace and the caller
/// is a stdlib module (`hull.*` chunk), run it again as stdlib.
fn with_origin<T>(
    lua: &Lua,
    mut f: impl FnMut(Origin) -> Result<T, DbError>,
) -> Result<T, DbError> {
    match f(Origin::App) {
        Err(DbError::Reserved) => {
            if called_from_stdlib(lua) {
                f(Origin::Stdlib)
            } else {
                Err(DbError::Reserved)
            }
        }
        other => other,
    }
}

/// Whether the script that called db.* is a stdlib module (`hull.*` chunk).
/// The caller is the first Lua frame outside the prelude (`=[cove]`): C
/// frames vary in number (db.query builds its result inside a protected
/// call), so no fixed level is right for every function.
fn called_from_stdlib(lua: &Lua) -> bool {
    for level in 1..8 {
        let source = lua.inspect_stack(level, |d| {
            let s = d.source();
            (s.what != "C").then(|| s.source.unwrap_or_default().into_owned())
        });
        match source {
            None => return false,
            Some(None) => continue,
            Some(Some(s)) if s == "=[cove]" => continue,
            Some(Some(s)) => return s.starts_with(crate::require::STDLIB_CHUNK),
        }
    }
    false
}

fn db_mut(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, Db>> {
    lua.app_data_mut::<Db>()
        .ok_or_else(|| mlua::Error::RuntimeError("database not open".into()))
}

fn query(lua: &Lua, args: (mlua::LuaString, Option<Table>)) -> mlua::Result<Outcome> {
    unlimited(lua, || query_rows(lua, args))
}

fn query_rows(lua: &Lua, (sql, p): (mlua::LuaString, Option<Table>)) -> mlua::Result<Outcome> {
    let sql = sql.to_str()?.to_string();
    let params = match params(lua, p) {
        Ok(p) => p,
        Err(e) => return fail(lua, format!("db.query: {e}")),
    };
    let result = crate::rows::query(lua, |each_row| {
        with_origin(lua, |origin| {
            let mut db = db_mut(lua).map_err(|e| DbError::Callback(e.to_string()))?;
            db.query(&sql, &params, origin, |cols, row| each_row(cols, row))
        })
    })?;
    match result {
        Ok(rows) => Ok((true, Value::Table(rows))),
        Err(e) => fail(lua, format!("db.query failed: {e}")),
    }
}

fn exec(lua: &Lua, (sql, p): (mlua::LuaString, Option<Table>)) -> mlua::Result<Outcome> {
    let sql = sql.to_str()?.to_string();
    let params = match params(lua, p) {
        Ok(p) => p,
        Err(e) => return fail(lua, format!("db.exec: {e}")),
    };
    let result = with_origin(lua, |origin| {
        let mut db = db_mut(lua).map_err(|e| DbError::Callback(e.to_string()))?;
        db.exec(&sql, &params, origin)
    });
    match result {
        Ok(changes) => Ok((true, Value::Integer(changes as i64))),
        Err(e) => fail(lua, format!("db.exec failed: {e}")),
    }
}

fn batch_step(lua: &Lua, step: fn(&mut Db) -> Result<(), DbError>) -> mlua::Result<Outcome> {
    let result = step(&mut *db_mut(lua)?);
    match result {
        Ok(()) => Ok((true, Value::Nil)),
        Err(e) => fail(lua, format!("db.batch: {e}")),
    }
}

pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    raw.raw_set("db_query", lua.create_function(query)?)?;
    raw.raw_set("db_exec", lua.create_function(exec)?)?;
    raw.raw_set(
        "db_last_id",
        lua.create_function(|lua, ()| Ok(db_mut(lua)?.last_id()))?,
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
