//! The `app` global (Hull §3.1, §11.2): the manifest and `app.config`; its
//! routes, middleware, `app.ws` and `app.publish` are the capability
//! table's (caps.rs).

use mlua::{Function, Lua, MultiValue, Table, Value};

use cove_caps::Registry;

use crate::bind::raising;

/// Per-VM app state, kept in the Lua app data.
pub(crate) struct AppState {
    pub(crate) files: cove_core::AppFiles,
    pub(crate) registry: Registry<Function>,
    pub(crate) manifest_value: Option<Value>,
    pub(crate) config: Option<Value>,
    /// The prelude's maker of a WebSocket endpoint's dispatcher (ws.rs).
    pub(crate) ws_dispatcher: Option<Function>,
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
            ws_dispatcher: None,
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

/// `app`'s functions that are not in the capability table, into the `app`
/// made first with its routes, middleware, `app.ws` and `app.publish`
/// (caps.rs). Each raises its failures as plain strings at the caller's
/// line (bind.rs `raising`).
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let app: Table = match lua.globals().raw_get("app")? {
        Value::Table(t) => t,
        _ => lua.create_table()?,
    };
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
