//! Reading `<app>/.cove/events.jsonl`, the event log `cove dev` appends to
//! (rotated to `events.jsonl.1` past 1 MiB): one JSON object a line, each
//! with `"event"` and `"time"` (unix milliseconds).

use std::fs;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::agent::state;

/// Every event in both files, oldest first; lines that do not parse (one
/// being written as we read) are skipped.
pub fn all(dir: &Path) -> Vec<Json> {
    [state::EVENTS_OLD, state::EVENTS]
        .iter()
        .filter_map(|name| fs::read_to_string(state::path(dir, name)).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str::<Json>(l).ok())
                .collect::<Vec<_>>()
        })
        .filter(Json::is_object)
        .collect()
}

/// Where the log stood at some moment: events after it are news.
pub struct Mark {
    /// The last event then (events carry their time, so it is unique
    /// enough to be found again), if any.
    last: Option<Json>,
    time_ms: u64,
}

pub fn mark(dir: &Path) -> Mark {
    Mark {
        last: all(dir).pop(),
        time_ms: state::now_ms(),
    }
}

/// The events after `mark`: those behind the last event it saw, or, when
/// that one was rotated away meanwhile, those stamped since.
pub fn after(dir: &Path, mark: &Mark) -> Vec<Json> {
    let mut events = all(dir);
    let seen = mark
        .last
        .as_ref()
        .and_then(|last| events.iter().rposition(|e| e == last));
    match seen {
        Some(i) => events.split_off(i + 1),
        None if mark.last.is_none() => events,
        None => events
            .into_iter()
            .filter(|e| e["time"].as_u64().is_some_and(|t| t >= mark.time_ms))
            .collect(),
    }
}

/// The last `lines` events, only those named `kind` when given.
pub fn tail(dir: &Path, lines: usize, kind: Option<&str>) -> Vec<Json> {
    let mut events: Vec<Json> = all(dir)
        .into_iter()
        .filter(|e| kind.is_none_or(|k| e["event"] == k))
        .collect();
    let skip = events.len().saturating_sub(lines);
    events.drain(..skip);
    events
}

/// Polls until an event after `mark` satisfies `done`; the events after
/// `mark` up to and including it, or `None` after `timeout`.
pub fn wait_for(
    dir: &Path,
    mark: &Mark,
    done: impl Fn(&Json) -> bool,
    timeout: Duration,
) -> Option<Vec<Json>> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut events = after(dir, mark);
        if let Some(i) = events.iter().position(&done) {
            events.truncate(i + 1);
            return Some(events);
        }
        if Instant::now() >= deadline {
            return None;
        }
        sleep(Duration::from_millis(50));
    }
}

/// Whether `e` is the event named `kind`.
pub fn is(e: &Json, kind: &str) -> bool {
    e["event"] == kind
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app_with_events(old: &[Json], new: &[Json]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".cove")).unwrap();
        let lines = |es: &[Json]| es.iter().map(|e| format!("{e}\n")).collect::<String>();
        fs::write(state::path(dir.path(), state::EVENTS_OLD), lines(old)).unwrap();
        // A half-written last line is skipped.
        let text = lines(new) + "{\"event\":\"lo";
        fs::write(state::path(dir.path(), state::EVENTS), text).unwrap();
        dir
    }

    #[test]
    fn tails_span_the_rotated_file_and_filter() {
        let e = |n: u64, kind: &str| json!({ "event": kind, "time": n });
        let dir = app_with_events(
            &[e(1, "log"), e(2, "started")],
            &[e(3, "log"), e(4, "reloaded")],
        );
        let times = |es: Vec<Json>| {
            es.iter()
                .map(|e| e["time"].as_u64().unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(times(tail(dir.path(), 3, None)), [2, 3, 4]);
        assert_eq!(times(tail(dir.path(), 10, Some("log"))), [1, 3]);
        let seen_two = Mark {
            last: Some(e(2, "started")),
            time_ms: 99,
        };
        assert_eq!(times(after(dir.path(), &seen_two)), [3, 4]);
        // Rotated away: the time decides.
        let rotated = Mark {
            last: Some(e(0, "log")),
            time_ms: 4,
        };
        assert_eq!(times(after(dir.path(), &rotated)), [4]);
        let empty = Mark {
            last: None,
            time_ms: 99,
        };
        assert_eq!(times(after(dir.path(), &empty)), [1, 2, 3, 4]);
        let reloaded = |e: &Json| is(e, "reloaded");
        let got = wait_for(dir.path(), &seen_two, reloaded, Duration::ZERO).unwrap();
        assert_eq!(times(got), [3, 4]);
        let now = mark(dir.path());
        assert!(wait_for(dir.path(), &now, reloaded, Duration::ZERO).is_none());
    }
}
