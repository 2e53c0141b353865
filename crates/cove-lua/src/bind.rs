//! What the bindings share, in one leaf module so that they do not depend
//! on each other for it: raising a failure at the caller's line from an
//! mlua function ([`raising`]; a Lua C function's is raised by
//! `raw::cfn`), and reaching the worker's database connection
//! ([`db_cell`]).

use mlua::{Function, Lua, MultiValue, Value};

use crate::error::describe;

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

/// The worker's connection as the VM keeps it (app data), shared with its
/// engine, which reaches it on every request without the app-data lookup
/// (~40 instructions a time).
pub(crate) type DbCell = cove_db::SharedDb;

pub(crate) fn db_cell(lua: &Lua) -> mlua::Result<DbCell> {
    lua.app_data_ref::<DbCell>()
        .map(|c| DbCell::clone(&c))
        .ok_or_else(|| mlua::Error::RuntimeError("database not open".into()))
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
