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

/// `log`'s functions (name, level, doc): bound by each runtime's capability
/// loop (crate::cap) and declared in the API catalog (api/io.rs) from here.
pub static FUNCTIONS: &[(&str, Level, &str)] = &[
    (
        "debug",
        Level::Debug,
        "log each value as its own debug line (shown with -l debug)",
    ),
    ("info", Level::Info, "log each value as its own info line"),
    (
        "warn",
        Level::Warn,
        "log each value as its own warning line",
    ),
    (
        "error",
        Level::Error,
        "log each value as its own error line",
    ),
];
