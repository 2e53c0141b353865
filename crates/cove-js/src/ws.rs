//! WebSocket endpoints (`app.ws`, docs/protocols.md): `raw.wsEvent()`, the
//! event the endpoint's dispatcher handles, and what a message carries
//! ([`data_arg`]). A connection's methods (`ws.send`, …) are the capability
//! table's `WebSocket` methods (caps.rs, `raw.wsMethods`), which queue
//! commands on the event in progress.

use rquickjs::{Ctx, Function, Object, TypedArray, Value};

use cove_core::WsEvent;

use crate::bind::{set_fn, throw};
use crate::raw::fastfn::{fast_table, install, Args, Method};
use crate::raw::value::{Val, View};
use cove_caps::cap::res::with_response;

/// What a message carries, and whether it is binary: a string as it is,
/// bytes (`ArrayBuffer`, typed array) as they are, anything else as JSON
/// (as `app.publish` takes it: cove_caps::cap::res).
pub(crate) fn data_arg<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> rquickjs::Result<(Vec<u8>, bool)> {
    let val = Val::lend(&v);
    // Through the view: an ASCII string is copied from where it lies,
    // not converted by QuickJS into a C string first (~220 instructions
    // of every `ws.send`).
    if let View::Str(s) = val.view() {
        return Ok((s.text()?.into_bytes(), false));
    }
    if let Some(b) = crate::raw::bytes::binary_of(&val)? {
        return Ok((b, true));
    }
    Ok((crate::json::json_text(ctx, v)?, false))
}

/// `raw.wsEvent(ev)`: the event in progress as its kind, 1 `open`, 2
/// `message`, 3 `close` (0 outside an event), with `ev` (ws.js's array of
/// three, reused) set to `[id, a, b]`: for a message the data (a string,
/// or a `Uint8Array` when binary) and whether it is binary; for a close
/// the code and reason. A new array a message, grown one element at a
/// time, and its kind as a new string cost ~2,500 instructions (callgrind);
/// rquickjs's wrapper of a closure ~800 more a call (raw/fastfn.rs).
fn event<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let kind = |n| Ok(Value::new_int(ctx.clone(), n));
    let Some(Some((id, event))) =
        with_response(|res| res.socket_turn().map(|t| (t.conn, t.event.clone())))
    else {
        return kind(0);
    };
    let Some(ev) = args.get(ctx, 0).into_array() else {
        return Err(throw(ctx, "wsEvent: the event array is missing"));
    };
    // An int, not a float: ws.js keys its connections by it, and QuickJS
    // makes a property key of an int without converting it to text.
    match i32::try_from(id) {
        Ok(small) => ev.set(0, small)?,
        Err(_) => ev.set(0, id as f64)?,
    }
    kind(match event {
        WsEvent::Open => 1,
        WsEvent::Message { data, binary } => {
            if binary {
                ev.set(1, TypedArray::<u8>::new(ctx.clone(), data.to_vec())?)?;
            } else {
                // Checked as UTF-8 by the server: read in place, not
                // copied (ASCII checked a word at a time first).
                let text = cove_core::utf8_lossy(&data);
                let text = rquickjs::String::from_str(ctx.clone(), &text)?;
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

/// The dispatchers of `app.ws` endpoints, compiled when an app first registers one.
const WS_JS: &str = include_str!("ws.js");

/// `raw.wsBuild()`: ws.js's function of `raw` that gives the maker of an
/// endpoint's dispatcher (its frames are Cove's, skipped in error
/// locations).
fn build<'js>(ctx: Ctx<'js>) -> rquickjs::Result<Function<'js>> {
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.filename = Some("cove:ws".into());
    opts.strict = true;
    ctx.eval_with_options(WS_JS, opts)
}

fast_table!(
    WsNatives,
    [Method {
        name: "wsEvent",
        arity: 1,
        chains: false,
        run: event
    },]
);

/// The natives, on the prelude's `raw`.
pub(crate) fn add<'js>(raw: &Object<'js>) -> rquickjs::Result<()> {
    set_fn(raw, "wsBuild", build)?;
    install::<WsNatives>(raw)
}
