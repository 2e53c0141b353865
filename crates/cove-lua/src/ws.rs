//! WebSocket endpoints (`app.ws`, docs/protocols.md; the capability
//! table's, caps.rs): `raw.ws_dispatcher`, which keeps the prelude's maker
//! of an endpoint's dispatcher for `app.ws`; `raw.ws_event`, the event a
//! dispatcher dispatches; and `raw.ws_methods`, what a connection's `ws`
//! table indexes: the capability table's `WebSocket` methods (caps.rs),
//! which queue commands on the event in progress.

use std::ffi::c_int;

use mlua::{Function, Lua, Table};

use cove_core::WsEvent;

use crate::raw::{upvalue, CFn, Stack};

/// The WebSocket event in progress, if the call in progress handles one.
fn socket_event() -> Option<(u64, WsEvent)> {
    cove_caps::cap::res::with_response(|res| {
        let turn = res.socket_turn()?;
        Some((turn.conn, turn.event.clone()))
    })
    .flatten()
}

/// `raw.ws_event()`: the event in progress as `id, kind, a, b`: `open`;
/// `message` with the data and whether it is binary; `close` with the code
/// and reason. Nothing outside an event. A C closure, as it runs for every
/// message (through mlua: ~1k instructions more), over the three kinds'
/// names (upvalues 1–3: pushing one anew hashes it, ~150 instructions).
struct WsEventFn;
impl CFn for WsEventFn {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let Some((id, event)) = socket_event() else {
            return Ok(0);
        };
        s.lifted(|s| {
            s.push_int(id as i64);
            match &event {
                WsEvent::Open => {
                    s.push_value(upvalue(1));
                    2
                }
                WsEvent::Message { data, binary } => {
                    s.push_value(upvalue(2));
                    s.push_bytes(data);
                    s.push_bool(*binary);
                    4
                }
                WsEvent::Close { code, reason } => {
                    s.push_value(upvalue(3));
                    s.push_int(i64::from(*code));
                    s.push_bytes(reason.as_bytes());
                    4
                }
            }
        })
    }
}

/// The dispatcher the prelude makes of an endpoint's handlers (which
/// `app.ws` has checked), for the registry.
pub(crate) fn dispatcher(lua: &Lua, handlers: Table) -> mlua::Result<Function> {
    let maker = lua
        .app_data_ref::<crate::app_api::AppState>()
        .and_then(|st| st.ws_dispatcher.clone())
        .ok_or_else(|| mlua::Error::runtime("app.ws: the prelude's dispatcher is missing"))?;
    maker.call(handlers)
}

/// `raw.ws_dispatcher`, `raw.ws_event` and `raw.ws_methods`, for the
/// prelude's dispatchers.
pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    let keep = lua.create_function(|lua, maker: Function| {
        if let Some(mut st) = lua.app_data_mut::<crate::app_api::AppState>() {
            st.ws_dispatcher = Some(maker);
        }
        Ok(())
    })?;
    raw.raw_set("ws_dispatcher", keep)?;
    let event: Function = crate::raw::exec(lua, (), |s| {
        for kind in [&b"open"[..], b"message", b"close"] {
            s.push_bytes(kind);
        }
        s.push_closure::<WsEventFn>(3);
    })?;
    raw.raw_set("ws_event", event)?;
    let methods = crate::caps::methods(lua, cove_caps::response::WEBSOCKET)?;
    raw.raw_set("ws_methods", methods)
}
