//! `app.get` … `app.use_post` (crate::routes): their arguments checked and
//! their messages made here, for both runtimes, and the handler added to
//! the app's registry. The binding converts the arguments as it does any
//! entry's and hands the handler over as its own function handle (`None`
//! when that argument is not a function: the message names what it was).

use cove_core::CapError;

use super::{CapValue, Runtime};
use crate::routes::{Registers, RouteFn};
use crate::Registry;

/// Register `handler` as `f` says, on the arguments the script passed.
pub(super) fn register<H>(
    f: &RouteFn,
    rt: Runtime,
    args: &[CapValue],
    handler: Option<H>,
    registry: &mut Registry<H>,
) -> Result<(), CapError> {
    let api = match rt {
        Runtime::Lua => f.lua,
        Runtime::Js => f.js,
    };
    let wrong = |what: &str, expected: &str, i: usize| {
        let got = args.get(i).unwrap_or(&CapValue::Nothing).type_name(rt);
        CapError::new(
            "app.argument",
            format!("app.{api}: {what} must be a {expected}, got {got}"),
        )
    };
    let text = |what: &str, i: usize| match args.get(i) {
        Some(CapValue::Str(b)) => std::str::from_utf8(b).map_err(|_| {
            CapError::new(
                "app.invalid",
                format!("app.{api}: {what} is not valid UTF-8"),
            )
        }),
        _ => Err(wrong(what, "string", i)),
    };
    let (method, pattern) = match f.registers {
        Registers::Route(method) => (method, text("the pattern", 0)?),
        Registers::Middleware(_) => (text("the method", 0)?, text("the pattern", 1)?),
    };
    let named = format!("the {}", f.handler_name());
    let handler = handler.ok_or_else(|| wrong(&named, "function", f.handler_arg()))?;
    registry.register(api, handler, |t, id| match f.registers {
        Registers::Route(_) => t.add_route(method, pattern, id),
        Registers::Middleware(phase) => t.add_middleware(phase, method, pattern, id),
    })
}
