//! Turning Lua errors into `file:line: message` text, and finding out which
//! script line called into Rust.

use mlua::{Error, Lua};

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
    fn detects_existing_location() {
        assert!(has_location("app.lua:12: boom"));
        assert!(!has_location("invalid status code 7"));
        assert!(!has_location("a: b"));
    }
}
