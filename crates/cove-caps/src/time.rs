//! `time.*` (Hull §6.2): Unix seconds and milliseconds, a monotonic clock and
//! UTC date strings.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

fn since_epoch() -> std::time::Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Unix time in seconds.
pub fn now() -> i64 {
    since_epoch().as_secs() as i64
}

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    since_epoch().as_millis() as i64
}

static START: OnceLock<Instant> = OnceLock::new();

/// Milliseconds on a monotonic clock that starts with the process.
pub fn clock() -> i64 {
    START.get_or_init(Instant::now).elapsed().as_millis() as i64
}

/// Start the monotonic clock (call once at process start).
pub fn start_clock() {
    START.get_or_init(Instant::now);
}

pub use cove_core::date::civil_from_days;

fn push2(out: &mut String, n: i64) {
    out.push((b'0' + (n / 10 % 10) as u8) as char);
    out.push((b'0' + (n % 10) as u8) as char);
}

/// `YYYY-MM-DD` (UTC) of a Unix time. (Hand-formatted: `format!` cost ~3k
/// instructions per call on the request path.)
pub fn date_of(secs: i64) -> String {
    let mut out = String::with_capacity(20);
    push_date(&mut out, secs);
    out
}

fn push_date(out: &mut String, secs: i64) {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    if (0..10_000).contains(&y) {
        push2(out, y / 100);
        push2(out, y % 100);
    } else {
        out.push_str(&y.to_string());
    }
    out.push('-');
    push2(out, i64::from(m));
    out.push('-');
    push2(out, i64::from(d));
}

/// `YYYY-MM-DDTHH:MM:SSZ` (UTC) of a Unix time.
pub fn datetime_of(secs: i64) -> String {
    let mut out = String::with_capacity(20);
    push_date(&mut out, secs);
    let rem = secs.rem_euclid(86_400);
    out.push('T');
    push2(&mut out, rem / 3600);
    out.push(':');
    push2(&mut out, rem / 60 % 60);
    out.push(':');
    push2(&mut out, rem % 60);
    out.push('Z');
    out
}

/// Today's UTC date.
pub fn date() -> String {
    date_of(now())
}

/// The current UTC date and time.
pub fn datetime() -> String {
    datetime_of(now())
}

/// What a `time` function reads.
#[derive(Clone, Copy)]
pub enum Reading {
    Int(fn() -> i64),
    /// Short text (Lua pushes at most 64 bytes of it, from a fixed buffer).
    Text(fn() -> String),
}

/// One script-facing `time` function.
pub struct TimeFn {
    pub lua: &'static str,
    pub js: &'static str,
    pub read: Reading,
    /// One line for the API docs.
    pub doc: &'static str,
}

/// Every `time` function: bound by each runtime's capability loop
/// (crate::cap) and declared in the API catalog (api/io.rs) from here.
pub static FUNCTIONS: &[TimeFn] = &[
    TimeFn {
        lua: "now",
        js: "now",
        read: Reading::Int(now),
        doc: "Unix time in seconds",
    },
    TimeFn {
        lua: "now_ms",
        js: "nowMs",
        read: Reading::Int(now_ms),
        doc: "Unix time in milliseconds",
    },
    TimeFn {
        lua: "clock",
        js: "clock",
        read: Reading::Int(clock),
        doc:
            "milliseconds on a monotonic clock started with the process (for durations, not dates)",
    },
    TimeFn {
        lua: "date",
        js: "date",
        read: Reading::Text(date),
        doc: "today's date in UTC: \"2026-11-27\"",
    },
    TimeFn {
        lua: "datetime",
        js: "datetime",
        read: Reading::Text(datetime),
        doc: "now in UTC: \"2026-11-27T08:55:53Z\"",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(datetime_of(0), "1970-01-01T00:00:00Z");
        assert_eq!(datetime_of(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(datetime_of(1_772_883_296), "2026-03-07T11:34:56Z");
        assert_eq!(date_of(-1), "1969-12-31");
    }

    #[test]
    fn clocks_move_forward() {
        let a = clock();
        assert!(clock() >= a);
        assert!(now_ms() / 1000 - now() <= 1);
    }
}
