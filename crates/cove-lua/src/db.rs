//! What `db` (Hull §5) needs beyond the capability table, whose loop binds
//! `query`, `exec` and `last_id` (caps.rs): `db.dialect`, and the batch
//! steps the prelude's `db.batch` wraps (it takes a function, which no
//! capability value carries).

use mlua::{Lua, Table, Value};

use cove_db::{Db, DbError};

use crate::bind::db_cell;
use crate::globals::{fail, Outcome};

fn batch_step(lua: &Lua, step: fn(&mut Db) -> Result<(), DbError>) -> mlua::Result<Outcome> {
    let result = step(&mut db_cell(lua)?.borrow_mut());
    match result {
        Ok(()) => Ok((true, Value::Nil)),
        Err(e) => fail(lua, format!("db.batch: {e}")),
    }
}

pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    raw.raw_set("db_dialect", db_cell(lua)?.borrow().dialect().name())?;
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
