//! The app's state in a Lua VM: what the app file registered (routes,
//! middleware, `app.ws`, the manifest: all the capability table's `app`
//! functions, caps.rs) and what capability calls use.

use mlua::Function;

use cove_caps::Registry;

/// Per-VM app state, kept in the Lua app data.
pub(crate) struct AppState {
    pub(crate) files: cove_core::AppFiles,
    pub(crate) registry: Registry<Function>,
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
            ws_dispatcher: None,
            kv: cove_caps::kv::Kv::default(),
            db: None,
        }
    }
}
