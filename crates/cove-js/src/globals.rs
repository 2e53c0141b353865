//! The native functions handed to the prelude (`raw.*`). Each is a thin
//! adapter: convert arguments, call the capability, convert the result.
//! Failures are thrown as JS errors whose message names the API.

use std::rc::Rc;

use rquickjs::{Ctx, Function, Object, Persistent, Value};

use cove_core::Phase;

use crate::bind::{set_fn, throw};
use crate::host::Host;

/// `raw.register(api, phase, method, pattern, fn)`: a route (`phase` null),
/// a middleware (`"pre"`, `"post"`) or a WebSocket endpoint (`"socket"`).
fn add_app<'js>(raw: &Object<'js>, host: &Rc<Host>) -> rquickjs::Result<()> {
    let h = host.clone();
    set_fn(
        raw,
        "register",
        move |ctx: Ctx<'js>,
              api: String,
              phase: Value<'js>,
              method: String,
              pattern: String,
              f: Function<'js>| {
            let saved = Persistent::save(&ctx, f);
            let phase = phase.as_string().map(|s| s.to_string()).transpose()?;
            let result =
                h.registry
                    .borrow_mut()
                    .register(&api, saved, |t, id| match phase.as_deref() {
                        None => t.add_route(&method, &pattern, id),
                        Some("socket") => t.add_socket(&pattern, id),
                        Some("pre") => t.add_middleware(Phase::Pre, &method, &pattern, id),
                        Some(_) => t.add_middleware(Phase::Post, &method, &pattern, id),
                    });
            result.map_err(|e| throw(&ctx, &e))
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
