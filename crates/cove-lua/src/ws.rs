//! WebSocket endpoints (`app.ws`, docs/protocols.md): `raw.ws_register`,
//! which registers the prelude's dispatcher of an endpoint; `raw.ws_event`,
//! the event it dispatches; and the methods of a connection's `ws` table,
//! plain C functions that queue commands on the event in progress (on the
//! response of the call, cove_caps::cap::res) and raise at the caller's
//! line.

use std::ffi::c_int;

use mlua::{Function, Lua, Table, Value};

use cove_caps::cap::res::ArgReader;
use cove_core::{WsCommand, WsEvent};

use crate::raw::{upvalue, CFn, Stack, View};

/// Queue `command` for connection `conn`, whose event must be the one in
/// progress (`ws:{api}`).
fn socket_command(api: &str, conn: u64, command: WsCommand) -> Result<(), String> {
    cove_caps::cap::res::with_response(|res| res.socket_command(conn, command))
        .unwrap_or_else(|| Err(cove_core::WS_NOT_RUNNING.into()))
        .map_err(|e| format!("ws:{api}: {e}"))
}

/// The WebSocket event in progress, if the call in progress handles one.
fn socket_event() -> Option<(u64, WsEvent)> {
    cove_caps::cap::res::with_response(|res| {
        let turn = res.socket_turn()?;
        Some((turn.conn, turn.event.clone()))
    })
    .flatten()
}

/// What a message carries: a string as it is, a number as text, anything
/// else as JSON, as `app.publish` reads it (caps.rs `Frame`).
fn data_arg(s: &mut Stack<'_>, idx: c_int, api: &str) -> Result<Vec<u8>, String> {
    let data = crate::caps::Frame::new(s, idx).data(0);
    data.map(|(text, _)| text)
        .map_err(|e| format!("{api}: {e}"))
}

/// The connection `ws:{api}` was called on: the `id` field of argument 1,
/// read raw (no metamethod runs) with the key from upvalue 1.
fn conn_id(s: &mut Stack<'_>, api: &str) -> Result<u64, String> {
    let id = if s.top() >= 1 && s.is_table(1) {
        s.push_value(upvalue(1));
        s.raw_get(1);
        let id = s.int_at(-1);
        s.pop(1);
        id
    } else {
        None
    };
    id.and_then(|n| u64::try_from(n).ok()).ok_or_else(|| {
        format!("ws:{api}: call it on a connection's ws object, with a colon: ws:{api}(...)")
    })
}

/// A string argument that must be there.
fn text(s: &Stack<'_>, idx: c_int, api: &str, what: &str) -> Result<String, String> {
    match s.arg(idx) {
        View::Str(b) => std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|_| format!("ws:{api}: {what} is not valid UTF-8")),
        other => Err(format!(
            "ws:{api}: {what} must be a string, got {}",
            other.type_name()
        )),
    }
}

/// `ws:send(data [, binary])`: a string as it is, a number as text,
/// anything else as JSON; binary when the second argument is true.
struct WsSend;
impl CFn for WsSend {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let conn = conn_id(s, "send")?;
        let data = data_arg(s, 2, "ws:send")?;
        let binary = matches!(s.arg(3), View::Bool(true));
        let command = WsCommand::Send {
            data: data.into(),
            binary,
        };
        socket_command("send", conn, command)?;
        Ok(0)
    }
}

/// `ws:close([code [, reason]])`: 1000 by default.
struct WsClose;
impl CFn for WsClose {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let conn = conn_id(s, "close")?;
        let code = match s.arg(2) {
            View::Nil => 1000,
            View::Int(n) => u16::try_from(n).unwrap_or(0),
            other => {
                return Err(format!(
                    "ws:close: the code must be an integer, got {}",
                    other.type_name()
                ))
            }
        };
        let reason = match s.arg(3) {
            View::Nil => String::new(),
            _ => text(s, 3, "close", "the reason")?,
        };
        let command = WsCommand::close(code, &reason).map_err(|e| format!("ws:close: {e}"))?;
        socket_command("close", conn, command)?;
        Ok(0)
    }
}

/// `ws:subscribe(topic)`: what `app.publish` sends to the topic reaches
/// this connection.
struct WsSubscribe;
impl CFn for WsSubscribe {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let conn = conn_id(s, "subscribe")?;
        let topic = text(s, 2, "subscribe", "the topic")?;
        let command = WsCommand::subscribe(&topic).map_err(|e| format!("ws:subscribe: {e}"))?;
        socket_command("subscribe", conn, command)?;
        Ok(0)
    }
}

struct WsUnsubscribe;
impl CFn for WsUnsubscribe {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let conn = conn_id(s, "unsubscribe")?;
        let topic = text(s, 2, "unsubscribe", "the topic")?;
        socket_command("unsubscribe", conn, WsCommand::Unsubscribe(topic))?;
        Ok(0)
    }
}

/// One method: a C closure over the key `"id"` (interned, so reading the
/// field pushes no new string).
fn method<F: CFn>(lua: &Lua) -> mlua::Result<Function> {
    crate::raw::exec(lua, (), |s| {
        s.push_bytes(b"id");
        s.push_closure::<F>(1);
    })
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
    let methods = lua.create_table()?;
    methods.raw_set("send", method::<WsSend>(lua)?)?;
    methods.raw_set("close", method::<WsClose>(lua)?)?;
    methods.raw_set("subscribe", method::<WsSubscribe>(lua)?)?;
    methods.raw_set("unsubscribe", method::<WsUnsubscribe>(lua)?)?;
    raw.raw_set("ws_methods", methods)
}
