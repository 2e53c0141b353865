//! `log.info/warn/error/debug` (Hull §6.3): each argument is its own line,
//! tagged `[app]`.

pub use cove_core::log::Level;

/// Log each message on its own line at `level`.
pub fn app<'a>(level: Level, messages: impl IntoIterator<Item = &'a str>) {
    if !cove_core::log::enabled(level) {
        return;
    }
    for m in messages {
        cove_core::log::write(level, "[app]", m);
    }
}
