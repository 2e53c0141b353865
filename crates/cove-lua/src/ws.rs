//! WebSocket endpoints (`app.ws`, docs/protocols.md): `raw.ws_register`,
//! which registers the prelude's dispatcher of an endpoint; `raw.ws_event`,
//! the event it dispatches; and `raw.ws_methods`, what a connection's `ws`
//! table indexes: the capability table's `WebSocket` methods (caps.rs),
//! which queue commands on the event in progress.

use std::ffi::c_int;

use mlua::{Function, Lua, Table, Value};

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

/// `raw.ws_register`, `raw.ws_event` and `raw.ws_methods`, for the
/// prelude's `app.ws`.
pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    // `true`, or `false` and the message, which the prelude raises at the
    // line of the app's `app.ws` call.
    let register = lua.create_function(|lua, (pattern, f): (Value, Function)| {
        let outcome = match pattern {
            Value::String(s) => crate::app_api::register_socket(lua, &s.to_str()?, f),
            other => Err(mlua::Error::runtime(format!(
                "app.ws: the pattern must be a string, got {}",
                other.type_name()
            ))),
        };
        Ok(match outcome {
            Ok(_) => (true, None),
            Err(e) => (false, Some(crate::error::describe(&e))),
        })
    })?;
    raw.raw_set("ws_register", register)?;
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
