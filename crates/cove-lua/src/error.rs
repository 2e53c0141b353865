//! Turning Lua errors into `file:line: message` text, finding out which
//! script line called into Rust, and the codes of capability errors.
//!
//! A Lua error stays the string Hull's API promises (apps `err:find(…)` it,
//! the conformance suite checks `type(err) == "string"`), so a capability's
//! code cannot ride on the error value. Instead each capability error
//! raised keeps its code here by its message, and `err:code()` (a function
//! added to the `string` table, so every other string method is looked up
//! as fast as before) finds it: the code of one of the last [`KEPT`]
//! capability errors this VM raised, or nil.

use std::cell::RefCell;
use std::collections::VecDeque;

use mlua::{Error, Lua, Value};

use cove_core::CapError;

/// How many raised errors' codes a VM keeps.
pub(crate) const KEPT: usize = 64;

/// The codes of the capability errors raised lately, by message, newest last.
#[derive(Default)]
struct RecentCodes(RefCell<VecDeque<(String, &'static str)>>);

/// `e`'s message, to raise; its code is kept for `err:code()`.
pub(crate) fn coded(lua: &Lua, e: CapError) -> String {
    if let Some(recent) = lua.app_data_ref::<RecentCodes>() {
        let mut recent = recent.0.borrow_mut();
        recent.retain(|(m, _)| *m != e.message);
        if recent.len() == KEPT {
            recent.pop_front();
        }
        recent.push_back((e.message.clone(), e.code));
    }
    e.message
}

/// `msg` without the `file:line: ` positions raising (and raising again)
/// put before it.
fn unlocated(mut msg: &str) -> &str {
    while has_location(msg) {
        msg = msg.split_once(": ").map_or(msg, |(_, rest)| rest);
    }
    msg
}

/// Install `string.code`: `err:code()` on a caught error string.
pub(crate) fn install_codes(lua: &Lua) -> mlua::Result<()> {
    lua.set_app_data(RecentCodes::default());
    let code = lua.create_function(|lua, v: Value| {
        let Value::String(s) = v else {
            return Ok(Value::Nil);
        };
        let text = s.to_string_lossy();
        let msg = unlocated(&text);
        let found = lua.app_data_ref::<RecentCodes>().and_then(|recent| {
            let recent = recent.0.borrow();
            recent.iter().rev().find(|(m, _)| m == msg).map(|(_, c)| *c)
        });
        match found {
            Some(c) => Ok(Value::String(lua.create_string(c)?)),
            None => Ok(Value::Nil),
        }
    })?;
    let string: mlua::Table = lua.globals().raw_get("string")?;
    string.raw_set("code", code)
}

/// Chunk name (without `@`/`=`) of the function `level` frames up.
pub(crate) fn chunk_of(lua: &Lua, level: usize) -> Option<String> {
    lua.inspect_stack(level, |d| {
        d.source()
            .source
            .map(|s| s.trim_start_matches(['@', '=']).to_string())
    })
    .flatten()
}

/// First `file:line` in a traceback that belongs to a script (not `[C]`).
fn traceback_location(traceback: &str) -> Option<&str> {
    traceback.lines().map(str::trim).find_map(|line| {
        if line.starts_with('[') {
            return None;
        }
        let (loc, _) = line.split_once(": in ")?;
        Some(loc)
    })
}

fn has_location(msg: &str) -> bool {
    // "app.lua:12: ..." or "[string \"x\"]:3: ..."
    msg.split_once(": ").is_some_and(|(head, _)| {
        head.rsplit_once(':')
            .is_some_and(|(_, line)| !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// mlua appends a traceback to string errors; logs want the message only.
fn strip_traceback(msg: &str) -> &str {
    msg.split_once("\nstack traceback:").map_or(msg, |(m, _)| m)
}

/// A one-line description of a Lua error for logs and 500 diagnostics.
pub(crate) fn describe(err: &Error) -> String {
    match err {
        Error::RuntimeError(msg) => strip_traceback(msg).to_string(),
        Error::SyntaxError { message, .. } => message.clone(),
        Error::MemoryError(_) => cove_core::OUT_OF_HEAP.to_string(),
        Error::CallbackError { traceback, cause } => {
            let msg = describe(cause);
            match traceback_location(traceback) {
                Some(loc) if !has_location(&msg) => format!("{loc}: {msg}"),
                _ => msg,
            }
        }
        Error::WithContext { context, cause } => format!("{context}: {}", describe(cause)),
        Error::ExternalError(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// Whether `err` is (or wraps) the VM running out of heap.
pub(crate) fn out_of_heap(err: &Error) -> bool {
    match err {
        Error::MemoryError(_) => true,
        Error::CallbackError { cause, .. } | Error::WithContext { cause, .. } => out_of_heap(cause),
        // Caught by a pcall and raised again as a string.
        Error::RuntimeError(msg) => msg.contains("not enough memory"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_script_location_in_traceback() {
        let tb =
            "stack traceback:\n\t[C]: in method 'status'\n\tapp.lua:12: in function <app.lua:10>";
        assert_eq!(traceback_location(tb), Some("app.lua:12"));
    }

    #[test]
    fn out_of_heap_is_found_inside_the_errors_that_wrap_it() {
        let oom = Error::MemoryError("not enough memory".into());
        assert!(out_of_heap(&oom));
        // mlua's CallbackError holds its cause in an Arc; the VM is not Send.
        #[allow(clippy::arc_with_non_send_sync)]
        let wrapped = Error::CallbackError {
            traceback: String::new(),
            cause: std::sync::Arc::new(oom),
        };
        assert!(out_of_heap(&wrapped));
        assert!(out_of_heap(&Error::runtime("app.lua:3: not enough memory")));
        assert!(!out_of_heap(&Error::runtime("app.lua:3: boom")));
    }

    #[test]
    fn codes_are_found_by_the_message_under_any_positions() {
        let lua = Lua::new();
        install_codes(&lua).unwrap();
        let msg = coded(
            &lua,
            CapError::new("kv.bad_key", "kv.set: key must be a non-empty string"),
        );
        lua.globals().raw_set("MSG", msg).unwrap();
        let codes: (String, String, Option<String>, Option<String>) = lua
            .load(
                "return (MSG):code(), ('app.lua:3: app.lua:9: ' .. MSG):code(), \
                 ('app.lua:3: other'):code(), string.code(42)",
            )
            .eval()
            .unwrap();
        assert_eq!(codes.0, "kv.bad_key");
        assert_eq!(codes.1, "kv.bad_key");
        assert_eq!((codes.2, codes.3), (None, None));
        for i in 0..KEPT {
            coded(&lua, CapError::new("x.y", format!("other {i}")));
        }
        let gone: Option<String> = lua.load("return (MSG):code()").eval().unwrap();
        assert_eq!(gone, None, "only the last {KEPT} are kept");
    }

    #[test]
    fn detects_existing_location() {
        assert!(has_location("app.lua:12: boom"));
        assert!(!has_location("invalid status code 7"));
        assert!(!has_location("a: b"));
    }
}
