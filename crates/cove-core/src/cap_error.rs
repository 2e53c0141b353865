//! The error a capability reports to a script: a stable code (`db.reserved`,
//! `kv.unavailable`, …) a script can branch on, and the message it has
//! always had. JavaScript receives it as a `CoveError` with `.code`
//! (crates/cove-js/src/bind.rs); Lua, whose errors are strings in Hull's
//! API (apps `string.find` them), receives the message, and `err:code()`
//! finds the code by it (crates/cove-lua/src/error.rs).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapError {
    pub code: &'static str,
    pub message: String,
}

impl CapError {
    pub fn new(code: &'static str, message: impl Into<String>) -> CapError {
        CapError {
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for CapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CapError {}
