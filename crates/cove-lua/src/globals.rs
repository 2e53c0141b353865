//! The raw half of `json` (the prelude wraps it).

use mlua::{Lua, Table, Value};

use crate::json;
use crate::vm::unlimited;

/// `ok, result` as returned by raw functions to the prelude.
pub(crate) type Outcome = (bool, Value);

pub(crate) fn fail(lua: &Lua, msg: impl AsRef<str>) -> mlua::Result<Outcome> {
    Ok((false, Value::String(lua.create_string(msg.as_ref())?)))
}

/// Raw functions handed to the prelude as its `raw` table.
pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    raw.raw_set(
        "json_encode",
        lua.create_function(|lua, v: Value| {
            unlimited(lua, || match json::encode(lua, &v) {
                Ok(bytes) => Ok((true, Value::String(lua.create_string(bytes)?))),
                Err(e) => fail(lua, format!("json.encode: {e}")),
            })
        })?,
    )?;
    raw.raw_set(
        "json_decode",
        lua.create_function(|lua, v: Value| {
            let Value::String(s) = v else {
                return fail(
                    lua,
                    format!("json.decode: expected a string, got {}", v.type_name()),
                );
            };
            unlimited(lua, || match json::decode(lua, &s.as_bytes()) {
                Ok(v) => Ok((true, v)),
                Err(e) => fail(lua, format!("json.decode: {e}")),
            })
        })?,
    )
}
