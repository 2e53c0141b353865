//! `log.debug/info/warn/error(...)`: each argument its own line, as text
//! the binding made of it ([`super::CapFn::text_args`]).

use cove_core::CapError;

use super::{CapValue, Started};
use crate::log::Level;

pub(super) fn write(level: Level, args: &[CapValue]) -> Result<Started, CapError> {
    let lines: Vec<std::borrow::Cow<str>> = args
        .iter()
        .map(|v| match v {
            CapValue::Str(b) => String::from_utf8_lossy(b),
            // A binding passes text; anything else is named, not lost.
            other => std::borrow::Cow::Borrowed(other.type_name(super::Runtime::Lua)),
        })
        .collect();
    crate::log::app(level, lines.iter().map(|l| l.as_ref()));
    Ok(Started::Done(CapValue::Nothing))
}
