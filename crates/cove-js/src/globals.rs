//! The native functions handed to the prelude (`raw.*`). Each is a thin
//! adapter: convert arguments, call the capability, convert the result.
//! Failures are thrown as JS errors whose message names the API.

use std::rc::Rc;

use rquickjs::{Ctx, Function, Object, Persistent};

use crate::bind::{set_fn, throw};
use crate::host::Host;

/// `raw.registerSocket(pattern, fn)`: a WebSocket endpoint's dispatcher
/// (ws.js). Routes and middleware are the capability table's (caps.rs).
fn add_app<'js>(raw: &Object<'js>, host: &Rc<Host>) -> rquickjs::Result<()> {
    let h = host.clone();
    set_fn(
        raw,
        "registerSocket",
        move |ctx: Ctx<'js>, pattern: String, f: Function<'js>| {
            let saved = Persistent::save(&ctx, f);
            let result = h
                .registry
                .borrow_mut()
                .register("ws", saved, |t, id| t.add_socket(&pattern, id));
            result.map_err(|e| crate::bind::throw_cap(&ctx, &e))
        },
    )?;
    let h = host.clone();
    set_fn(raw, "manifest", move |ctx: Ctx<'js>, text: String| {
        let fail = |e: String| throw(&ctx, &format!("app.manifest: {e}"));
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        h.registry
            .borrow_mut()
            .set_manifest(value)
            .map_err(|e| throw(&ctx, &e))
    })
}

/// The `raw` object the prelude receives.
pub(crate) fn raw_object<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let raw = Object::new(ctx.clone())?;
    add_app(&raw, host)?;
    raw.set("reqGetters", crate::req::getters(ctx)?)?;
    crate::db::add(&raw, host)?;
    raw.set(
        "resProto",
        crate::caps::methods(ctx, cove_caps::response::RESPONSE, "res")?,
    )?;
    raw.set(
        "wsMethods",
        crate::caps::methods(ctx, cove_caps::response::WEBSOCKET, "ws")?,
    )?;
    crate::ws::add(&raw)?;
    Ok(raw)
}
