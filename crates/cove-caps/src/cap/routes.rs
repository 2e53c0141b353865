//! `app.get` … `app.use_post` and `app.ws` (crate::routes): their arguments
//! checked and their messages made here, for both runtimes, and the handler
//! added to the app's registry. The binding converts the arguments as it
//! does any entry's and hands the handler over as its own function handle
//! (`None` when that argument is not a function, or for `app.ws` not a
//! table: the message names what it was). And `app`'s other functions
//! ([`call`]): the manifest given to the registry and read back from it.

use cove_core::CapError;

use super::{CapValue, Runtime};
use crate::routes::{AppFn, AppOp, Registers, RouteFn, WS_HANDLERS};
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
        Registers::Socket => ("GET", text("the pattern", 0)?),
    };
    if f.takes_handlers() {
        handlers(api, rt, args.get(f.handler_arg()))?;
    }
    let named = format!("the {}", f.handler_name());
    let handler = handler.ok_or_else(|| wrong(&named, "function", f.handler_arg()))?;
    registry.register(api, handler, |t, id| match f.registers {
        Registers::Route(_) => t.add_route(method, pattern, id),
        Registers::Middleware(phase) => t.add_middleware(phase, method, pattern, id),
        Registers::Socket => t.add_socket(pattern, id),
    })
}

/// Run one of `app`'s functions that registers no handler.
pub(super) fn call<H>(
    f: &AppFn,
    rt: Runtime,
    args: &[CapValue],
    registry: &mut Registry<H>,
) -> Result<CapValue, CapError> {
    match f.op {
        AppOp::Manifest => {
            registry.set_manifest(manifest(rt, args.first().unwrap_or(&CapValue::Nothing))?)?;
            Ok(CapValue::Nothing)
        }
        // A copy, as JSON holds it: what is in force, whatever the script
        // did to its own value afterwards.
        AppOp::GetManifest => Ok(match registry.manifest() {
            Some(m) => CapValue::Json(m.raw.to_string().into_bytes()),
            None => CapValue::Nothing,
        }),
        AppOp::Accept => Ok(CapValue::Nothing),
    }
}

/// The manifest as JSON: a table (JS: an object) of fields. A Lua table
/// with nothing in it reads as an empty list. Functions in it are left
/// out, as `JSON.stringify` leaves them.
fn manifest(rt: Runtime, v: &CapValue) -> Result<serde_json::Value, CapError> {
    match v {
        CapValue::Record(_) => Ok(v.to_json()),
        CapValue::List(items) if items.is_empty() => Ok(serde_json::json!({})),
        other => {
            let expected = match rt {
                Runtime::Lua => "a table",
                Runtime::Js => "an object",
            };
            Err(CapError::new(
                "app.argument",
                format!(
                    "app.manifest: the argument must be {expected}, got {}",
                    other.type_name(rt)
                ),
            ))
        }
    }
}

/// `app.ws`'s handlers: a table (JS: an object) of functions named
/// [`WS_HANDLERS`], each optional.
fn handlers(api: &str, rt: Runtime, v: Option<&CapValue>) -> Result<(), CapError> {
    let refuse = |msg: String| Err(CapError::new("app.argument", format!("app.{api}: {msg}")));
    let v = v.unwrap_or(&CapValue::Nothing);
    let fields = match v {
        CapValue::Record(fields) => fields,
        // A Lua table with integer keys: its first is not a handler's name.
        CapValue::List(_) if rt == Runtime::Lua => {
            return refuse(format!(
                "unknown handler \"1\" (the handlers are {})",
                names()
            ))
        }
        other => {
            let shape = match rt {
                Runtime::Lua => "a table {open = fn, message = fn, close = fn}",
                Runtime::Js => "an object { open, message, close }",
            };
            return refuse(format!(
                "the handlers must be {shape}, got {}",
                other.type_name(rt)
            ));
        }
    };
    for (name, f) in fields {
        if !WS_HANDLERS.contains(&name.as_str()) {
            return refuse(format!(
                "unknown handler \"{name}\" (the handlers are {})",
                names()
            ));
        }
        if *f != CapValue::Other("function") {
            return refuse(format!(
                "handlers.{name} must be a function, got {}",
                f.type_name(rt)
            ));
        }
    }
    Ok(())
}

/// "open, message and close".
fn names() -> String {
    match WS_HANDLERS {
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => String::new(),
    }
}
