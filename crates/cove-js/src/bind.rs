//! What every binding of a capability uses: throwing errors as scripts see
//! them (plain `Error`s, or `CoveError`s with a code), naming a value's type
//! in a message, reading a text argument, and adding a function to an
//! object. A leaf: it uses no other module of this crate, so the bindings
//! that use it do not depend on each other through it.

use rquickjs::{Ctx, Exception, Function, Object, Value};

/// The module objects by export name (a plain object), kept as runtime
/// userdata (engine.rs fills it; modules.rs exports from it).
pub(crate) type NativeObjects<'js> = Object<'js>;

/// Throw a plain `Error` with `msg`.
pub(crate) fn throw(ctx: &Ctx<'_>, msg: &str) -> rquickjs::Error {
    Exception::throw_message(ctx, msg)
}

/// Where the prelude's `CoveError` class is kept (the module objects): the
/// global of that name is the app's to shadow.
pub(crate) const COVE_ERROR: &str = "CoveError";

/// Throw a capability's error as a `CoveError` with its `code`; its message
/// is the one scripts have always seen.
pub(crate) fn throw_cap(ctx: &Ctx<'_>, e: &cove_core::CapError) -> rquickjs::Error {
    let made = ctx
        .userdata::<NativeObjects>()
        .and_then(|o| o.get::<_, rquickjs::function::Constructor>(COVE_ERROR).ok())
        .and_then(|c| c.construct::<_, Value>((e.message.as_str(), e.code)).ok());
    match made {
        Some(err) => ctx.throw(err),
        None => Exception::throw_message(ctx, &e.message),
    }
}

/// `typeof`-style name of a value, for error messages.
pub(crate) fn type_name(v: &Value<'_>) -> &'static str {
    if v.is_null() {
        "null"
    } else if v.is_undefined() {
        "undefined"
    } else if v.is_bool() {
        "boolean"
    } else if v.is_number() {
        "number"
    } else if v.is_string() {
        "string"
    } else if v.is_array() {
        "array"
    } else if v.is_function() {
        "function"
    } else {
        "object"
    }
}

pub(crate) fn set_fn<'js, P, F>(obj: &Object<'js>, name: &str, f: F) -> rquickjs::Result<()>
where
    F: rquickjs::function::IntoJsFunc<'js, P> + 'js,
{
    obj.set(name, Function::new(obj.ctx().clone(), f)?.with_name(name)?)
}
