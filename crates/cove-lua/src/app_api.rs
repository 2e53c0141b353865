//! The `app` global (Hull §3.1, §11.2): routes, middleware, manifest.

use mlua::{Function, Lua, Table, Value};

use cove_caps::Registry;
use cove_core::{HandlerId, Phase, RouteTable};

/// Per-VM app state, kept in the Lua app data.
pub(crate) struct AppState {
    pub(crate) files: cove_core::AppFiles,
    pub(crate) registry: Registry<Function>,
    pub(crate) manifest_value: Option<Value>,
    pub(crate) config: Option<Value>,
}

impl AppState {
    pub(crate) fn new(files: cove_core::AppFiles) -> Self {
        AppState {
            files,
            registry: Registry::default(),
            manifest_value: None,
            config: None,
        }
    }
}

fn state_mut(lua: &Lua) -> mlua::Result<mlua::AppDataRefMut<'_, AppState>> {
    lua.app_data_mut::<AppState>()
        .ok_or_else(|| mlua::Error::RuntimeError("app state missing".into()))
}

fn register(
    lua: &Lua,
    api: &str,
    f: Function,
    add: impl FnOnce(&mut RouteTable, HandlerId) -> Result<(), cove_core::RouteError>,
) -> mlua::Result<()> {
    state_mut(lua)?
        .registry
        .register(api, f, add)
        .map_err(mlua::Error::RuntimeError)
}

pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let app: Table = lua.create_table()?;
    for (api, method) in [
        ("get", "GET"),
        ("post", "POST"),
        ("put", "PUT"),
        ("del", "DELETE"),
        ("delete", "DELETE"),
        ("patch", "PATCH"),
        ("options", "OPTIONS"),
    ] {
        let f = lua.create_function(move |lua, (pattern, f): (String, Function)| {
            register(lua, api, f, |t, id| t.add_route(method, &pattern, id))
        })?;
        app.raw_set(api, f)?;
    }
    for (api, phase) in [("use", Phase::Pre), ("use_post", Phase::Post)] {
        let f = lua.create_function(
            move |lua, (method, pattern, f): (String, String, Function)| {
                register(lua, api, f, |t, id| {
                    t.add_middleware(phase, &method, &pattern, id)
                })
            },
        )?;
        app.raw_set(api, f)?;
    }
    app.raw_set("manifest", lua.create_function(set_manifest)?)?;
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
