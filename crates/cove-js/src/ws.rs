//! WebSocket endpoints (`app.ws`, docs/protocols.md): the natives behind
//! the prelude's connection objects. `raw.wsEvent()` is the event the
//! endpoint's dispatcher handles; `raw.wsSend`, `wsClose`, `wsSubscribe`
//! and `wsUnsubscribe` queue commands on it (host.rs's call in progress),
//! only for the connection whose event it is.

use rquickjs::{Array, Ctx, Function, Object, TypedArray, Value};

use cove_core::{WsCommand, WsEvent};

use crate::bind::{set_fn, throw, type_name};
use crate::host::try_with_call;

/// Queue `command` for connection `id` (`ws.{api}`).
fn command(ctx: &Ctx<'_>, api: &str, id: f64, command: WsCommand) -> rquickjs::Result<()> {
    let outcome = match id {
        id if id >= 1.0 && id.fract() == 0.0 => {
            try_with_call(|c| c.res.socket_command(id as u64, command))
        }
        _ => Some(Err(format!(
            "call it on a connection's ws object (ws.{api}(...))"
        ))),
    };
    outcome
        .unwrap_or_else(|| Err(cove_core::WS_NOT_RUNNING.into()))
        .map_err(|e| throw(ctx, &format!("ws.{api}: {e}")))
}

/// A string argument.
fn text(ctx: &Ctx<'_>, v: &Value<'_>, api: &str, what: &str) -> rquickjs::Result<String> {
    match v.as_string() {
        Some(s) => s.to_string(),
        None => Err(throw(
            ctx,
            &format!("ws.{api}: {what} must be a string, got {}", type_name(v)),
        )),
    }
}

/// `raw.wsEvent(ev)`: the event in progress as its kind, 1 `open`, 2
/// `message`, 3 `close` (0 outside an event), with `ev` (ws.js's array of
/// three, reused) set to `[id, a, b]`: for a message the data (a string,
/// or a `Uint8Array` when binary) and whether it is binary; for a close
/// the code and reason. A new array a message, grown one element at a
/// time, and its kind as a new string cost ~2,500 instructions (callgrind).
fn event<'js>(ctx: Ctx<'js>, ev: Array<'js>) -> rquickjs::Result<i32> {
    let Some(Some((id, event))) =
        try_with_call(|c| c.res.socket_turn().map(|t| (t.conn, t.event.clone())))
    else {
        return Ok(0);
    };
    ev.set(0, id as f64)?;
    Ok(match event {
        WsEvent::Open => 1,
        WsEvent::Message { data, binary } => {
            if binary {
                ev.set(1, TypedArray::<u8>::new(ctx.clone(), data.to_vec())?)?;
            } else {
                // Checked as UTF-8 by the server: read in place, not
                // copied (`from_utf8_lossy` also took ~3x the time to check).
                let text = match std::str::from_utf8(&data) {
                    Ok(text) => rquickjs::String::from_str(ctx.clone(), text)?,
                    Err(_) => {
                        let text = String::from_utf8_lossy(&data);
                        rquickjs::String::from_str(ctx.clone(), &text)?
                    }
                };
                ev.set(1, text)?;
            }
            ev.set(2, binary)?;
            2
        }
        WsEvent::Close { code, reason } => {
            ev.set(1, i32::from(code))?;
            ev.set(2, reason)?;
            3
        }
    })
}

/// `app.ws` itself, compiled when an app first calls it.
const WS_JS: &str = include_str!("ws.js");

/// `raw.wsBuild()`: ws.js's function of `(raw, register)` that makes
/// `app.ws` (its frames are Cove's, skipped in error locations).
fn build<'js>(ctx: Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.filename = Some("cove:ws".into());
    opts.strict = true;
    ctx.eval_with_options(WS_JS, opts)
}

/// The natives, on the prelude's `raw`.
pub(crate) fn add<'js>(raw: &Object<'js>) -> rquickjs::Result<()> {
    set_fn(raw, "wsBuild", build)?;
    set_fn(raw, "wsEvent", event)?;
    set_fn(
        raw,
        "wsSend",
        |ctx: Ctx<'js>, id: f64, data: Value<'js>, as_binary: bool| {
            let (data, binary) = crate::res::data_arg(&ctx, data)?;
            let send = WsCommand::Send {
                data: data.into(),
                binary: binary || as_binary,
            };
            command(&ctx, "send", id, send)
        },
    )?;
    set_fn(
        raw,
        "wsClose",
        |ctx: Ctx<'js>, id: f64, code: Value<'js>, reason: Value<'js>| {
            let code = match code.as_number() {
                _ if code.is_undefined() => 1000,
                Some(n) if n.fract() == 0.0 && (0.0..=65535.0).contains(&n) => n as u16,
                Some(_) => 0,
                None => {
                    let got = type_name(&code);
                    let msg = format!("ws.close: the code must be an integer, got {got}");
                    return Err(throw(&ctx, &msg));
                }
            };
            let reason = match reason.is_undefined() {
                true => String::new(),
                false => text(&ctx, &reason, "close", "the reason")?,
            };
            let close = WsCommand::close(code, &reason)
                .map_err(|e| throw(&ctx, &format!("ws.close: {e}")))?;
            command(&ctx, "close", id, close)
        },
    )?;
    set_fn(
        raw,
        "wsSubscribe",
        |ctx: Ctx<'js>, id: f64, topic: Value<'js>| {
            let topic = text(&ctx, &topic, "subscribe", "the topic")?;
            let subscribe = WsCommand::subscribe(&topic)
                .map_err(|e| throw(&ctx, &format!("ws.subscribe: {e}")))?;
            command(&ctx, "subscribe", id, subscribe)
        },
    )?;
    set_fn(
        raw,
        "wsUnsubscribe",
        |ctx: Ctx<'js>, id: f64, topic: Value<'js>| {
            let topic = text(&ctx, &topic, "unsubscribe", "the topic")?;
            command(&ctx, "unsubscribe", id, WsCommand::Unsubscribe(topic))
        },
    )
}
