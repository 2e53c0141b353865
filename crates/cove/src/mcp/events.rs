//! Reading `<app>/.cove/events.jsonl`, the event log `cove dev` appends to
//! (rotated to `events.jsonl.1` past 1 MiB): one JSON object a line, each
//! with `"event"` and `"time"` (unix milliseconds).

use std::fs;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value as Json;

use super::dev_link::cove_file;

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Every event in both files, oldest first; lines that do not parse (one
/// being written as we read) are skipped.
pub fn all(dir: &Path) -> Vec<Json> {
    ["events.jsonl.1", "events.jsonl"]
        .iter()
        .filter_map(|name| fs::read_to_string(cove_file(dir, name)).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str::<Json>(l).ok())
                .collect::<Vec<_>>()
        })
        .filter(Json::is_object)
        .collect()
}

/// The events at or after `time_ms`.
pub fn since(dir: &Path, time_ms: u64) -> Vec<Json> {
    all(dir)
        .into_iter()
        .filter(|e| e["time"].as_u64().is_some_and(|t| t >= time_ms))
        .collect()
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

/// Polls until an event at or after `time_ms` is one of `kinds`; the events
/// since `time_ms` up to and including it, or `None` after `timeout`.
pub fn wait_for(dir: &Path, time_ms: u64, kinds: &[&str], timeout: Duration) -> Option<Vec<Json>> {
    let deadline = Instant::now() + timeout;
    loop {
        let mut events = since(dir, time_ms);
        if let Some(i) = events
            .iter()
            .position(|e| kinds.iter().any(|k| e["event"] == *k))
        {
            events.truncate(i + 1);
            return Some(events);
        }
        if Instant::now() >= deadline {
            return None;
        }
        sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app_with_events(old: &[Json], new: &[Json]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".cove")).unwrap();
        let lines = |es: &[Json]| es.iter().map(|e| format!("{e}\n")).collect::<String>();
        fs::write(cove_file(dir.path(), "events.jsonl.1"), lines(old)).unwrap();
        // A half-written last line is skipped.
        let text = lines(new) + "{\"event\":\"lo";
        fs::write(cove_file(dir.path(), "events.jsonl"), text).unwrap();
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
        assert_eq!(times(since(dir.path(), 3)), [3, 4]);
        let got = wait_for(dir.path(), 2, &["reloaded"], Duration::ZERO).unwrap();
        assert_eq!(times(got), [2, 3, 4]);
        assert!(wait_for(dir.path(), 5, &["reloaded"], Duration::ZERO).is_none());
    }
}
