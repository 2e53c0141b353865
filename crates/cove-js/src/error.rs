//! Turning JavaScript exceptions into `file:line: message` text.

use rquickjs::convert::Coerced;
use rquickjs::{Ctx, Exception, FromJs, Value};

use crate::vm::Budget;

/// Script name of Cove's own glue code; its frames are skipped when looking
/// for the app line that caused an error.
pub(crate) const PRELUDE_NAME: &str = "cove:prelude";

/// `file:line` of the first stack frame that belongs to app code.
fn app_location(stack: &str) -> Option<String> {
    stack.lines().find_map(|line| {
        let frame = line.trim().strip_prefix("at ")?;
        let place = match frame.rsplit_once(" (") {
            Some((_, inner)) => inner.strip_suffix(')')?,
            None => frame,
        };
        let (rest, _col) = place.rsplit_once(':')?;
        let (file, line) = rest.rsplit_once(':')?;
        // `<input>` is the text JSON.parse was given, not a file.
        let internal = file == "native"
            || file.starts_with('<')
            || file.starts_with("cove:")
            || file.starts_with("hull:");
        (!internal && line.bytes().all(|b| b.is_ascii_digit())).then(|| format!("{file}:{line}"))
    })
}

/// A one-line description of a thrown value.
fn describe_value<'js>(ctx: &Ctx<'js>, v: &Value<'js>, budget: &Budget) -> String {
    let Some(exc) = v
        .as_object()
        .and_then(|o| Exception::from_object(o.clone()))
    else {
        return coerce(ctx, v);
    };
    let name: String = exc.get("name").unwrap_or_default();
    let message = exc.message().unwrap_or_default();
    let msg = if budget.exceeded() {
        budget.message()
    } else if name == "InternalError" && message == "out of memory" {
        // The same words as the Lua runtime.
        cove_core::OUT_OF_HEAP.to_string()
    } else if name.is_empty() || name == "Error" {
        message
    } else {
        format!("{name}: {message}")
    };
    let msg = crate::typescript::import_hint(msg);
    match exc.stack().as_deref().and_then(app_location) {
        Some(loc) => format!("{loc}: {msg}"),
        None => msg,
    }
}

/// `String(v)`, for values thrown that are not errors (`throw "boom"`).
fn coerce<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> String {
    let text =
        Coerced::<String>::from_js(ctx, v.clone()).map_or_else(|_| format!("{v:?}"), |c| c.0);
    format!("uncaught exception: {text}")
}

/// Describe a failed call; takes the pending exception from the context.
pub(crate) fn describe(ctx: &Ctx<'_>, err: rquickjs::Error, budget: &Budget) -> String {
    match err {
        rquickjs::Error::Exception => describe_value(ctx, &ctx.catch(), budget),
        other if budget.exceeded() => format!("{} ({other})", budget.message()),
        other => other.to_string(),
    }
}

/// Describe a value a promise was rejected with.
pub(crate) fn describe_rejection<'js>(ctx: &Ctx<'js>, v: &Value<'js>, budget: &Budget) -> String {
    describe_value(ctx, v, budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_app_frame() {
        let stack = "    at query (native)\n    at <anonymous> (cove:prelude:12:3)\n    at handler (app.js:7:15)\n    at <anonymous> (app.js:2:1)\n";
        assert_eq!(app_location(stack).as_deref(), Some("app.js:7"));
        assert_eq!(
            app_location("    at lib/x.js:3:9\n").as_deref(),
            Some("lib/x.js:3")
        );
        assert_eq!(app_location("    at f (native)\n"), None);
        let parse = "    at <input>:1:2\n    at parse (native)\n    at <anonymous> (app.js:3:20)\n";
        assert_eq!(app_location(parse).as_deref(), Some("app.js:3"));
    }
}
