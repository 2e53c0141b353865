//! `cove dev`'s events for coding agents and tools (docs/agents.md): one
//! JSON object a line in `.cove/events.jsonl` and, with `--agent`, on
//! stdout; the last error in `.cove/last_error.json`; the running server in
//! `.cove/dev.json`. Writing never fails the server: a full disk or a
//! closed stdout loses events, not requests. Nothing here logs, as every
//! log line comes here too.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Map, Value as Json};

use crate::agent::state;

pub struct Events {
    app_dir: PathBuf,
    stdout: bool,
    file: Mutex<Sink>,
}

struct Sink {
    file: Option<File>,
    written: u64,
}

impl Events {
    /// Start a fresh record: `events.jsonl` emptied, and a `dev.json` or
    /// reload request left by a server that did not stop cleanly removed.
    pub fn start(app_dir: &Path, stdout: bool) -> Events {
        let _ = std::fs::create_dir_all(app_dir.join(state::DIR));
        for stale in [state::DEV, state::RELOAD, state::EVENTS_OLD] {
            let _ = std::fs::remove_file(state::path(app_dir, stale));
        }
        Events {
            app_dir: app_dir.to_path_buf(),
            stdout,
            file: Mutex::new(Sink {
                file: File::create(state::path(app_dir, state::EVENTS)).ok(),
                written: 0,
            }),
        }
    }

    /// Record `event` with `fields` (an object) and the time; an error
    /// event becomes the last error.
    pub fn emit(&self, event: &str, fields: Json) {
        let mut record = Map::new();
        record.insert("event".into(), event.into());
        record.insert("time".into(), state::now_ms().into());
        if let Json::Object(fields) = fields {
            record.extend(fields);
        }
        let record = Json::Object(record);
        let line = format!("{record}\n");
        if matches!(event, "reload_failed" | "request_error") {
            let mut last = record.clone();
            // Hull's last_error.json has these two.
            last["timestamp"] = (state::now_ms() / 1000).into();
            let _ = state::write_json(&self.app_dir, state::LAST_ERROR, &last);
        }
        let mut sink = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if self.stdout {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
        }
        sink.append(&self.app_dir, line.as_bytes());
    }

    /// The app (re)loaded: the last error is history.
    pub fn loaded(&self) {
        let _ = std::fs::remove_file(state::path(&self.app_dir, state::LAST_ERROR));
    }

    /// A load or reload failed with `error` (`app.lua:12: …`).
    pub fn load_failed(&self, error: &str, initial: bool) {
        let parsed = cove_core::location::parse(error);
        let at = parsed.locations.first();
        self.emit(
            "reload_failed",
            json!({
                "file": at.map(|a| a.file.clone()),
                "line": at.map(|a| a.line),
                "message": parsed.message,
                "error": error,
                "initial": initial,
            }),
        );
    }

    /// The server listens on `addr`: `dev.json`, and the `started` event.
    /// `db` is the database file (`None` for PostgreSQL: a URL's password
    /// stays out of files).
    pub fn started(&self, addr: SocketAddr, runtime: &str, entry: &str, db: Option<&Path>) {
        let url = format!("http://{addr}");
        let fields = json!({
            "port": addr.port(),
            "pid": std::process::id(),
            "runtime": runtime,
            "entry": entry,
            "url": url,
            "db": db,
        });
        let mut dev = fields.clone();
        dev["started_at"] = (state::now_ms() / 1000).into();
        let _ = state::write_json(&self.app_dir, state::DEV, &dev);
        self.emit("started", fields);
    }

    /// The server stopped: no `dev.json` to mislead `cove status`.
    pub fn stopped(&self) {
        let _ = std::fs::remove_file(state::path(&self.app_dir, state::DEV));
        self.emit("stopped", json!({}));
    }

    /// Whether a client asked for a reload (`.cove/reload`); the request is
    /// taken.
    pub fn reload_requested(&self) -> bool {
        std::fs::remove_file(state::path(&self.app_dir, state::RELOAD)).is_ok()
    }

    /// A request a script error failed.
    pub fn request_failed(&self, failed: &cove_server::FailedRequest<'_>) {
        self.emit(
            "request_error",
            json!({
                "method": failed.method,
                "path": failed.path,
                "status": failed.status,
                "file": failed.at.map(|a| a.file.clone()),
                "line": failed.at.map(|a| a.line),
                "message": failed.message,
                "error": failed.error,
            }),
        );
    }
}

impl Sink {
    /// Append `line`, moving a full file to `events.jsonl.1` first.
    fn append(&mut self, app_dir: &Path, line: &[u8]) {
        if self.written + line.len() as u64 > state::EVENTS_MAX {
            let _ = std::fs::rename(
                state::path(app_dir, state::EVENTS),
                state::path(app_dir, state::EVENTS_OLD),
            );
            self.file = OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(state::path(app_dir, state::EVENTS))
                .ok();
            self.written = 0;
        }
        if let Some(file) = &mut self.file {
            if file.write_all(line).is_ok() {
                self.written += line.len() as u64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(dir: &Path, name: &str) -> Vec<Json> {
        std::fs::read_to_string(state::path(dir, name))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn an_error_is_the_last_error_until_a_good_load() {
        let dir = tempfile::tempdir().unwrap();
        let events = Events::start(dir.path(), false);
        events.load_failed("app.lua:12: attempt to call a nil value", true);
        let last = state::last_error(dir.path());
        assert_eq!(last["event"], "reload_failed");
        assert_eq!(last["file"], "app.lua");
        assert_eq!(last["line"], 12);
        assert_eq!(last["message"], "attempt to call a nil value");
        assert!(last["timestamp"].is_u64());
        events.loaded();
        assert_eq!(state::last_error(dir.path()), json!({ "errors": [] }));
        let written = lines(dir.path(), state::EVENTS);
        assert_eq!(written.len(), 1);
        assert_eq!(written[0]["initial"], true);
    }

    #[test]
    fn started_and_stopped_keep_dev_json() {
        let dir = tempfile::tempdir().unwrap();
        let events = Events::start(dir.path(), false);
        let db = dir.path().join("dev.db");
        events.started(
            "127.0.0.1:4321".parse().unwrap(),
            "lua",
            "app.lua",
            Some(&db),
        );
        let dev = state::read_json(dir.path(), state::DEV).unwrap();
        assert_eq!(dev["port"], 4321);
        assert_eq!(dev["url"], "http://127.0.0.1:4321");
        assert_eq!(dev["pid"], std::process::id());
        assert_eq!(dev["db"], db.to_str().unwrap());
        events.stopped();
        assert!(state::read_json(dir.path(), state::DEV).is_none());
        let kinds: Vec<Json> = lines(dir.path(), state::EVENTS)
            .into_iter()
            .map(|e| e["event"].clone())
            .collect();
        assert_eq!(kinds, [json!("started"), json!("stopped")]);
    }

    #[test]
    fn a_reload_request_is_taken_once() {
        let dir = tempfile::tempdir().unwrap();
        let events = Events::start(dir.path(), false);
        assert!(!events.reload_requested());
        std::fs::write(state::path(dir.path(), state::RELOAD), "").unwrap();
        assert!(events.reload_requested());
        assert!(!events.reload_requested());
    }

    #[test]
    fn a_full_file_moves_aside() {
        let dir = tempfile::tempdir().unwrap();
        let events = Events::start(dir.path(), false);
        let message = "x".repeat(1000);
        let n = state::EVENTS_MAX as usize / 1000 + 5;
        for _ in 0..n {
            events.emit("log", json!({ "level": "info", "message": message }));
        }
        let old = lines(dir.path(), state::EVENTS_OLD);
        let new = lines(dir.path(), state::EVENTS);
        assert_eq!(old.len() + new.len(), n);
        assert!(!new.is_empty() && !old.is_empty());
    }
}
