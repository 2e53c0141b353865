//! The `app` global (Hull §3.1, §11.2): routes, middleware, manifest.

use mlua::{Function, Lua, MultiValue, Table, Value};

use cove_caps::Registry;
use cove_core::{HandlerId, Phase, RouteTable};

use crate::bind::raising;

/// Per-VM app state, kept in the Lua app data.
pub(crate) struct AppState {
    pub(crate) files: cove_core::AppFiles,
    pub(crate) registry: Registry<Function>,
    pub(crate) manifest_value: Option<Value>,
    pub(crate) config: Option<Value>,
    /// What capability calls use (caps.rs): kept here so that a call
    /// finds everything with one app-data lookup.
    pub(crate) kv: cove_caps::kv::Kv,
    pub(crate) db: Option<crate::bind::DbCell>,
}

impl AppState {
    pub(crate) fn new(files: cove_core::AppFiles) -> Self {
        AppState {
            files,
            registry: Registry::default(),
            manifest_value: None,
            config: None,
            kv: cove_caps::kv::Kv::default(),
            db: None,
        }
    }
}

fn state_mut(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, AppState>> {
    lua.app_data_mut::<AppState>()
        .ok_or_else(|| mlua::Error::RuntimeError("app state missing".into()))
}

/// Argument `i` (from 0) of `app.{api}` as a `T` (`expected` names it for
/// the error).
fn arg<T: mlua::FromLua>(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    (api, what, expected): (&str, &str, &str),
) -> mlua::Result<T> {
    let v = args.get(i).cloned().unwrap_or(Value::Nil);
    let got = v.type_name();
    T::from_lua(v, lua).map_err(|_| {
        mlua::Error::runtime(format!("app.{api}: {what} must be a {expected}, got {got}"))
    })
}

fn register(
    lua: &Lua,
    api: &str,
    f: Function,
    add: impl FnOnce(&mut RouteTable, HandlerId) -> Result<(), cove_core::RouteError>,
) -> mlua::Result<MultiValue> {
    state_mut(lua)?
        .registry
        .register(api, f, add)
        .map_err(mlua::Error::RuntimeError)?;
    Ok(MultiValue::new())
}

/// `app.ws(pattern, handlers)`: the prelude's dispatcher for the endpoint.
pub(crate) fn register_socket(lua: &Lua, pattern: &str, f: Function) -> mlua::Result<MultiValue> {
    register(lua, "ws", f, |t, id| t.add_socket(pattern, id))
}

/// Every `app.*` function raises its failures as plain strings at the
/// caller's line (bind.rs `raising`), as `db.*` does. They join the `app`
/// of the capability table (`app.publish`: caps.rs), made first.
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let app: Table = match lua.globals().raw_get("app")? {
        Value::Table(t) => t,
        _ => lua.create_table()?,
    };
    for (api, method) in [
        ("get", "GET"),
        ("post", "POST"),
        ("put", "PUT"),
        ("del", "DELETE"),
        ("delete", "DELETE"),
        ("patch", "PATCH"),
        ("options", "OPTIONS"),
    ] {
        let f = raising(lua, move |lua, args| {
            let pattern: String = arg(lua, &args, 0, (api, "the pattern", "string"))?;
            let f = arg(lua, &args, 1, (api, "the handler", "function"))?;
            register(lua, api, f, |t, id| t.add_route(method, &pattern, id))
        })?;
        app.raw_set(api, f)?;
    }
    for (api, phase) in [("use", Phase::Pre), ("use_post", Phase::Post)] {
        let f = raising(lua, move |lua, args| {
            let method: String = arg(lua, &args, 0, (api, "the method", "string"))?;
            let pattern: String = arg(lua, &args, 1, (api, "the pattern", "string"))?;
            let f = arg(lua, &args, 2, (api, "the middleware", "function"))?;
            register(lua, api, f, |t, id| {
                t.add_middleware(phase, &method, &pattern, id)
            })
        })?;
        app.raw_set(api, f)?;
    }
    app.raw_set(
        "manifest",
        raising(lua, |lua, args| {
            let t = arg(lua, &args, 0, ("manifest", "the argument", "table"))?;
            set_manifest(lua, t)?;
            Ok(MultiValue::new())
        })?,
    )?;
    app.raw_set(
        "get_manifest",
        lua.create_function(|lua, ()| Ok(state_mut(lua)?.manifest_value.clone()))?,
    )?;
    app.raw_set(
        "config",
        lua.create_function(|lua, v: Value| {
            state_mut(lua)?.config = Some(v);
            Ok(())
        })?,
    )?;
    lua.globals().raw_set("app", app)
}

fn set_manifest(lua: &Lua, t: Table) -> mlua::Result<()> {
    let raw: serde_json::Value = mlua::LuaSerdeExt::from_value(lua, Value::Table(t.clone()))
        .map_err(|e| mlua::Error::RuntimeError(format!("app.manifest: {e}")))?;
    let mut st = state_mut(lua)?;
    st.registry
        .set_manifest(raw)
        .map_err(mlua::Error::RuntimeError)?;
    st.manifest_value = Some(Value::Table(t));
    Ok(())
}
