//! The last handler errors of the process, for the dashboard's table
//! (`/errors` on the metrics listener). Errors are the cold path, so one
//! mutex around a small ring is enough; a request without errors never
//! comes here.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// How many errors are kept.
pub(crate) const KEEP: usize = 50;

/// A message is cut to this many bytes: a script can raise an error of any
/// size, and the ring should stay small.
const MESSAGE_MAX: usize = 2048;

/// One handler error.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RecentError {
    /// 1 for the process's first error, counting those no longer kept.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    pub worker: String,
    pub method: String,
    pub path: String,
    pub message: String,
}

/// The last `cap` errors, oldest first.
pub(crate) struct Ring {
    cap: usize,
    seen: u64,
    items: VecDeque<RecentError>,
}

impl Ring {
    pub(crate) const fn new(cap: usize) -> Ring {
        Ring {
            cap,
            seen: 0,
            items: VecDeque::new(),
        }
    }

    pub(crate) fn push(&mut self, worker: &str, method: &str, path: &str, message: &str) {
        self.seen += 1;
        if self.items.len() == self.cap {
            self.items.pop_front();
        }
        let time_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        self.items.push_back(RecentError {
            seq: self.seen,
            time_ms,
            worker: worker.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            message: cut(message, MESSAGE_MAX).to_string(),
        });
    }

    /// `{"total": N, "kept": K, "errors": [...]}`, newest first.
    pub(crate) fn to_json(&self) -> Value {
        let errors: Vec<Value> = self
            .items
            .iter()
            .rev()
            .map(|e| {
                json!({
                    "seq": e.seq,
                    "time_ms": e.time_ms,
                    "worker": e.worker,
                    "method": e.method,
                    "path": e.path,
                    "where": location(&e.message),
                    "message": e.message,
                })
            })
            .collect();
        json!({ "total": self.seen, "kept": self.cap, "errors": errors })
    }
}

static RING: Mutex<Ring> = Mutex::new(Ring::new(KEEP));

/// Keep `message`, an error of a request on `worker`.
pub(crate) fn record(worker: &str, method: &str, path: &str, message: &str) {
    // A panic while the lock was held leaves a ring that is still whole.
    let mut ring = RING.lock().unwrap_or_else(|e| e.into_inner());
    ring.push(worker, method, path, message);
}

/// The kept errors as `/errors` serves them.
pub(crate) fn json() -> Value {
    RING.lock().unwrap_or_else(|e| e.into_inner()).to_json()
}

/// `s` cut to at most `max` bytes, on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The first `file:line` in an error message (`app.lua:3: kaboom`,
/// `... at f (lib/util.js:12)`): a word with a dot in it, a colon, digits.
pub(crate) fn location(message: &str) -> Option<String> {
    let bytes = message.as_bytes();
    for (i, _) in message.match_indices(':') {
        let digits = bytes[i + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            continue;
        }
        let start = message[..i]
            .rfind(|c: char| c.is_whitespace() || "()[]\"'`<>,".contains(c))
            .map_or(0, |p| p + 1);
        let file = &message[start..i];
        if file.contains('.') && !file.ends_with('.') {
            return Some(format!("{file}:{}", &message[i + 1..i + 1 + digits]));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_last_errors_newest_first() {
        let mut ring = Ring::new(3);
        for n in 1..=5 {
            ring.push("0", "GET", &format!("/p{n}"), &format!("app.lua:{n}: e{n}"));
        }
        let v = ring.to_json();
        assert_eq!(v["total"], 5);
        assert_eq!(v["kept"], 3);
        let paths: Vec<&str> = v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, ["/p5", "/p4", "/p3"]);
        assert_eq!(v["errors"][0]["seq"], 5);
        assert_eq!(v["errors"][0]["where"], "app.lua:5");
        assert_eq!(v["errors"][0]["message"], "app.lua:5: e5");
        assert_eq!(v["errors"][0]["method"], "GET");
        assert!(v["errors"][0]["time_ms"].as_u64().unwrap() > 1_600_000_000_000);
    }

    #[test]
    fn an_empty_ring() {
        let v = Ring::new(KEEP).to_json();
        assert_eq!(v, json!({ "total": 0, "kept": KEEP, "errors": [] }));
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let mut ring = Ring::new(1);
        let long = "é".repeat(MESSAGE_MAX);
        ring.push("1", "POST", "/x", &long);
        let kept = &ring.items[0].message;
        assert!(kept.len() <= MESSAGE_MAX && kept.len() >= MESSAGE_MAX - 1);
        assert!(long.starts_with(kept.as_str()));
    }

    #[test]
    fn where_an_error_was_raised() {
        assert_eq!(location("app.lua:3: kaboom").as_deref(), Some("app.lua:3"));
        assert_eq!(
            location("app.js:4: ReferenceError: x is not defined").as_deref(),
            Some("app.js:4")
        );
        assert_eq!(
            location("Error: boom\n    at f (lib/util.js:12)").as_deref(),
            Some("lib/util.js:12")
        );
        assert_eq!(location("instruction budget exceeded"), None);
        assert_eq!(location("at 12:30 it failed"), None);
        assert_eq!(location("trailing:"), None);
    }
}
