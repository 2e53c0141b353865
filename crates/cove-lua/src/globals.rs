//! What the prelude's raw functions return: `ok, result`, which its `wrap`
//! turns into a result or an error at the caller's line.

use mlua::{Lua, Value};

/// `ok, result` as returned by raw functions to the prelude.
pub(crate) type Outcome = (bool, Value);

pub(crate) fn fail(lua: &Lua, msg: impl AsRef<str>) -> mlua::Result<Outcome> {
    Ok((false, Value::String(lua.create_string(msg.as_ref())?)))
}
