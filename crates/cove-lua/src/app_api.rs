//! The `app` global (Hull §3.1, §11.2): routes, middleware, manifest.

use std::path::PathBuf;

use mlua::{Function, Lua, Table, Value};

use cove_caps::Manifest;
use cove_core::{HandlerId, Phase, RouteTable};

/// Per-VM app state, kept in the Lua app data.
pub(crate) struct AppState {
    pub(crate) app_dir: PathBuf,
    /// Registration is only allowed while the app file runs.
    pub(crate) loading: bool,
    pub(crate) routes: RouteTable,
    pub(crate) handlers: Vec<Function>,
    pub(crate) manifest: Option<Manifest>,
    pub(crate) manifest_value: Option<Value>,
    pub(crate) config: Option<Value>,
}

impl AppState {
    pub(crate) fn new(app_dir: PathBuf) -> Self {
        AppState {
            app_dir,
            loading: true,
            routes: RouteTable::new(),
            handlers: Vec::new(),
            manifest: None,
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
    let mut st = state_mut(lua)?;
    if !st.loading {
        return Err(mlua::Error::RuntimeError(format!(
            "app.{api}: routes and middleware must be registered while the app loads (at the top level of the app file)"
        )));
    }
    let id = st.handlers.len() as HandlerId;
    add(&mut st.routes, id).map_err(|e| mlua::Error::RuntimeError(format!("app.{api}: {e}")))?;
    st.handlers.push(f);
    Ok(())
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
    let manifest =
        Manifest::from_value(raw).map_err(|e| mlua::Error::RuntimeError(e.to_string()))?;
    let mut st = state_mut(lua)?;
    if st.manifest.is_some() {
        return Err(mlua::Error::RuntimeError(
            cove_caps::ManifestError::Twice.to_string(),
        ));
    }
    st.manifest = Some(manifest);
    st.manifest_value = Some(Value::Table(t));
    Ok(())
}
