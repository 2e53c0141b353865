//! `time`, `log` and the raw half of `json` (the prelude wraps it). Each is a thin adapter over its capability in cove-caps.

use mlua::{Lua, Table, Value, Variadic};

use cove_caps::log::Level;

use crate::json;
use crate::vm::unlimited;

/// `ok, result` as returned by raw functions to the prelude.
pub(crate) type Outcome = (bool, Value);

pub(crate) fn fail(lua: &Lua, msg: impl AsRef<str>) -> mlua::Result<Outcome> {
    Ok((false, Value::String(lua.create_string(msg.as_ref())?)))
}

pub(crate) fn install_time(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    crate::res::add_time(lua, &t)?;
    lua.globals().raw_set("time", t)
}

pub(crate) fn install_log(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    for (name, level) in [
        ("debug", Level::Debug),
        ("info", Level::Info),
        ("warn", Level::Warn),
        ("error", Level::Error),
    ] {
        let f = lua.create_function(move |_, args: Variadic<Value>| {
            if !cove_core::log::enabled(level) {
                return Ok(());
            }
            let lines = args
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s.to_string_lossy()),
                    other => other.to_string(),
                })
                .collect::<mlua::Result<Vec<_>>>()?;
            cove_caps::log::app(level, lines.iter().map(String::as_str));
            Ok(())
        })?;
        t.raw_set(name, f)?;
    }
    lua.globals().raw_set("log", t)
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
