//! The native functions handed to the prelude (`raw.*`). Each is a thin
//! adapter: convert arguments, call the capability, convert the result.
//! Failures are thrown as JS errors whose message names the API.

use std::rc::Rc;

use rquickjs::{Ctx, Function, Object, Persistent};

use crate::bind::set_fn;
use crate::host::Host;

/// `raw.wsDispatcher(maker)`: keeps the prelude's maker of a WebSocket
/// endpoint's dispatcher (ws.js) for `app.ws`. The rest of `app` is the
/// capability table's (caps.rs).
fn add_app<'js>(raw: &Object<'js>, host: &Rc<Host>) -> rquickjs::Result<()> {
    let h = host.clone();
    set_fn(
        raw,
        "wsDispatcher",
        move |ctx: Ctx<'js>, maker: Function<'js>| {
            *h.ws_dispatcher.borrow_mut() = Some(Persistent::save(&ctx, maker));
        },
    )
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
