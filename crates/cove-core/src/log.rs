//! Process-wide log sink: `HH:MM:SS LEVEL message` lines on stderr (Hull
//! §13.4), times in UTC. The level is process-wide because `-l` is.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Trace = 0,
    Debug = 1,
    Info = 2,
    Warn = 3,
    Error = 4,
    Fatal = 5,
}

impl Level {
    pub const NAMES: [&'static str; 6] = ["trace", "debug", "info", "warn", "error", "fatal"];

    pub fn parse(s: &str) -> Option<Level> {
        Some(match s {
            "trace" => Level::Trace,
            "debug" => Level::Debug,
            "info" => Level::Info,
            "warn" => Level::Warn,
            "error" => Level::Error,
            "fatal" => Level::Fatal,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    fn label(self) -> &'static str {
        ["TRACE", "DEBUG", "INFO ", "WARN ", "ERROR", "FATAL"][self as usize]
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);

pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    level as u8 >= LEVEL.load(Ordering::Relaxed)
}

/// `HH:MM:SS` of the current UTC time.
pub fn clock_hms() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let day = secs % 86_400;
    format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60)
}

/// Also receives every line written, after stderr: `(level, tag, message)`.
type Tee = Box<dyn Fn(Level, &str, &str) + Send + Sync>;

static TEE: OnceLock<Tee> = OnceLock::new();

/// Send every line also to `tee` (`cove dev`'s agent events), for the rest
/// of the process; only the first call takes effect. `tee` must not log.
pub fn tee(tee: impl Fn(Level, &str, &str) + Send + Sync + 'static) {
    let _ = TEE.set(Box::new(tee));
}

/// Write one log line if `level` is enabled. `tag` is e.g. `[cove]` or `[app]`.
pub fn write(level: Level, tag: &str, message: &str) {
    if !enabled(level) {
        return;
    }
    let line = format!("{} {} {} {}\n", clock_hms(), level.label(), tag, message);
    // A closed stderr must not take the server down.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    if let Some(tee) = TEE.get() {
        tee(level, tag, message);
    }
}

pub fn info(message: &str) {
    write(Level::Info, "[cove]", message);
}

pub fn warn(message: &str) {
    write(Level::Warn, "[cove]", message);
}

pub fn error(message: &str) {
    write(Level::Error, "[cove]", message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_levels() {
        for name in Level::NAMES {
            assert!(Level::parse(name).is_some());
        }
        assert_eq!(Level::parse("loud"), None);
        assert!(Level::Error > Level::Info);
    }

    #[test]
    fn clock_format() {
        let s = clock_hms();
        assert_eq!(s.len(), 8);
        assert_eq!(&s[2..3], ":");
    }
}
