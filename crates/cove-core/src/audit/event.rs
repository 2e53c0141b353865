//! One audit line: `{"ts":…,"cap":…,"worker":…,"request_id":…, fields…}`,
//! built as text (no serde in cove-core; the fields are few and flat) and
//! written to stderr with one `write_all`, so lines of different threads
//! do not mix.

use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{context, Context};

/// Longest string value kept (Hull keeps the first 512 bytes of SQL); a
/// longer one is cut at a character boundary.
pub const MAX_VALUE: usize = 512;

/// An audit line being built. Keys are the caller's literals; values are
/// escaped.
#[derive(Debug)]
pub struct Event {
    line: String,
}

impl Event {
    /// A line for `cap` (e.g. `env.get`), for this thread's [`Context`].
    pub fn new(cap: &str) -> Event {
        Event::with(&context(), cap)
    }

    /// A line for `cap`, for `ctx` (captured where the work was asked for).
    pub fn with(ctx: &Context, cap: &str) -> Event {
        Event::at(SystemTime::now(), ctx, cap)
    }

    pub(crate) fn at(now: SystemTime, ctx: &Context, cap: &str) -> Event {
        let mut line = String::with_capacity(256);
        line.push_str("{\"ts\":\"");
        push_timestamp(&mut line, now);
        line.push('"');
        let mut e = Event { line }.str("cap", cap);
        e = match ctx.worker {
            Some(w) => e.int("worker", i64::from(w)),
            None => e.null("worker"),
        };
        e.opt_str("request_id", ctx.request_id.as_deref())
    }

    fn key(&mut self, key: &str) {
        self.line.push_str(",\"");
        self.line.push_str(key);
        self.line.push_str("\":");
    }

    pub fn str(mut self, key: &str, value: &str) -> Event {
        self.key(key);
        push_string(&mut self.line, value);
        self
    }

    /// A string, or `null`.
    pub fn opt_str(self, key: &str, value: Option<&str>) -> Event {
        match value {
            Some(v) => self.str(key, v),
            None => self.null(key),
        }
    }

    pub fn int(mut self, key: &str, value: i64) -> Event {
        self.key(key);
        let _ = write!(self.line, "{value}");
        self
    }

    pub fn bool(mut self, key: &str, value: bool) -> Event {
        self.key(key);
        self.line.push_str(if value { "true" } else { "false" });
        self
    }

    pub fn null(mut self, key: &str) -> Event {
        self.key(key);
        self.line.push_str("null");
        self
    }

    /// An array of strings.
    pub fn strs<'a>(mut self, key: &str, values: impl IntoIterator<Item = &'a str>) -> Event {
        self.key(key);
        self.line.push('[');
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            push_string(&mut self.line, v);
        }
        self.line.push(']');
        self
    }

    /// An array of integers.
    pub fn ints(mut self, key: &str, values: impl IntoIterator<Item = i64>) -> Event {
        self.key(key);
        self.line.push('[');
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            let _ = write!(self.line, "{v}");
        }
        self.line.push(']');
        self
    }

    /// The finished line, newline included.
    pub fn line(mut self) -> String {
        self.line.push_str("}\n");
        self.line
    }

    /// Write the line to stderr. A closed stderr must not take the server
    /// down, so a failed write is dropped.
    pub fn emit(self) {
        let line = self.line();
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// `value` as a JSON string, cut to [`MAX_VALUE`] bytes.
fn push_string(out: &mut String, value: &str) {
    let mut end = value.len().min(MAX_VALUE);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    out.push('"');
    for c in value[..end].chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn push2(out: &mut String, n: u64) {
    out.push((b'0' + (n / 10 % 10) as u8) as char);
    out.push((b'0' + (n % 10) as u8) as char);
}

/// RFC 3339 in UTC with milliseconds: `2026-03-07T11:34:56.789Z`.
pub(crate) fn push_timestamp(out: &mut String, now: SystemTime) {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (y, m, d) = crate::date::civil_from_days((secs / 86_400) as i64);
    let _ = write!(out, "{y}");
    out.push('-');
    push2(out, u64::from(m));
    out.push('-');
    push2(out, u64::from(d));
    out.push('T');
    let rem = secs % 86_400;
    push2(out, rem / 3600);
    out.push(':');
    push2(out, rem / 60 % 60);
    out.push(':');
    push2(out, rem % 60);
    out.push('.');
    let ms = u64::from(since.subsec_millis());
    out.push((b'0' + (ms / 100) as u8) as char);
    push2(out, ms % 100);
    out.push('Z');
}
