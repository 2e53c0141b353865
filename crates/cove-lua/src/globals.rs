//! `time`, `log` and the raw halves of `json` and `env` (the prelude wraps
//! them). Each is a thin adapter over its capability in cove-caps.

use mlua::{Function, Lua, MultiValue, Table, Value, Variadic};

use cove_caps::env;
use cove_caps::log::Level;

use crate::app_api::AppState;
use crate::error::describe;
use crate::json;
use crate::vm::unlimited;

/// `ok, result` as returned by raw functions to the prelude.
pub(crate) type Outcome = (bool, Value);

pub(crate) fn fail(lua: &Lua, msg: impl AsRef<str>) -> mlua::Result<Outcome> {
    Ok((false, Value::String(lua.create_string(msg.as_ref())?)))
}

/// Calls a raw function (`true, a, b` or `false, message`) and raises the
/// message at the caller's line, as the prelude's `wrap` does.
const RAISING: &str = r#"
local raw, error = ...
return function(...)
  local ok, a, b = raw(...)
  if ok then
    return a, b
  end
  error(a, 2)
end
"#;

/// A Lua function running `body` whose failures raise as plain strings
/// positioned at the caller (`app.lua:12: crypto.sha256: …`), as the
/// prelude's wrappers and `db.*` raise them, not as mlua error objects
/// (whose text is `runtime error: …` and a traceback). `body` returns at
/// most two values.
pub(crate) fn raising<F>(lua: &Lua, body: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<MultiValue> + 'static,
{
    let raw = lua.create_function(move |lua, args: MultiValue| {
        Ok(match body(lua, args) {
            Ok(mut values) => {
                values.push_front(Value::Boolean(true));
                values
            }
            Err(e) => MultiValue::from_iter([
                Value::Boolean(false),
                Value::String(lua.create_string(describe(&e))?),
            ]),
        })
    })?;
    let error: Function = lua.globals().raw_get("error")?;
    lua.load(RAISING).set_name("=[cove]").call((raw, error))
}

pub(crate) fn install_time(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    crate::native::add_time(lua, &t)?;
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
    )?;
    raw.raw_set(
        "env_get",
        lua.create_function(|lua, name: String| {
            let allow = lua
                .app_data_ref::<AppState>()
                .and_then(|s| s.registry.env_allow().map(<[String]>::to_vec));
            match env::get(allow.as_deref(), &name) {
                Ok(Some(v)) => Ok((true, Value::String(lua.create_string(v)?))),
                Ok(None) => Ok((true, Value::Nil)),
                Err(e) => fail(lua, format!("env.get: {e}")),
            }
        })?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_functions_raise_plain_strings_at_the_callers_line() {
        let lua = Lua::new();
        let f = raising(&lua, |_, args| {
            if args.is_empty() {
                Err(mlua::Error::runtime("x.y: bad input"))
            } else {
                Ok(args)
            }
        })
        .unwrap();
        lua.globals().raw_set("f", f).unwrap();
        let (kind, err, a, b): (String, String, i64, i64) = lua
            .load(
                "local ok, e = pcall(function() local r = f() return r end)\n\
                 local a, b = f(1, 2)\n\
                 return type(e), e, a, b",
            )
            .set_name("@app.lua")
            .eval()
            .unwrap();
        assert_eq!(kind, "string");
        assert_eq!(err, "app.lua:1: x.y: bad input");
        assert_eq!((a, b), (1, 2));
    }
}
