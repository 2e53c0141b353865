//! What `cove dev` keeps in the app's `.cove/` directory for agents and
//! tools (docs/agents.md), and reading it back: `cove status`, `cove errors`
//! and `cove mcp` find the running dev server here.

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value as Json};

/// The directory, under the app's.
pub const DIR: &str = ".cove";
/// `{"port","pid","started_at","runtime","entry","url","db"}` while a dev server runs.
pub const DEV: &str = "dev.json";
/// The last failed load or request; gone after a good (re)load.
pub const LAST_ERROR: &str = "last_error.json";
/// Every event, one JSON object a line.
pub const EVENTS: &str = "events.jsonl";
/// `events.jsonl` is moved here past [`EVENTS_MAX`] bytes.
pub const EVENTS_OLD: &str = "events.jsonl.1";
pub const EVENTS_MAX: u64 = 1 << 20;
/// Created by a client to ask the dev server for a reload.
pub const RELOAD: &str = "reload";

/// The dev server's port when neither `-p` nor `dev.json` names one (Hull's).
pub const DEFAULT_PORT: u16 = 3000;

/// Milliseconds since the Unix epoch: events' `time`.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `<app_dir>/.cove/<name>`.
pub fn path(app_dir: &Path, name: &str) -> PathBuf {
    app_dir.join(DIR).join(name)
}

/// A JSON file of `.cove/`, if it is there and parses.
pub fn read_json(app_dir: &Path, name: &str) -> Option<Json> {
    let text = std::fs::read_to_string(path(app_dir, name)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Write a JSON file of `.cove/` whole: a reader never sees half of it.
pub fn write_json(app_dir: &Path, name: &str, value: &Json) -> std::io::Result<()> {
    let dir = app_dir.join(DIR);
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    std::fs::write(&tmp, format!("{value}\n"))?;
    std::fs::rename(tmp, dir.join(name))
}

/// Whether something accepts connections on 127.0.0.1:`port`.
pub fn answers(port: u16) -> bool {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    TcpStream::connect_timeout(&addr, Duration::from_millis(500)).is_ok()
}

/// `<app>/.cove/dev.json`, if present and JSON.
pub fn dev_json(app_dir: &Path) -> Option<Json> {
    read_json(app_dir, DEV)
}

/// The port of the app's `cove dev`, if its dev.json names a live process
/// that accepts connections there (a stale file from a crash does not count).
pub fn listening_port(app_dir: &Path) -> Option<u16> {
    let info = dev_json(app_dir)?;
    let port = u16::try_from(info.get("port")?.as_u64()?).ok()?;
    let pid = i32::try_from(info.get("pid")?.as_i64()?).ok()?;
    (alive(pid) && answers(port)).then_some(port)
}

/// Whether process `pid` exists (signal 0).
pub fn alive(pid: i32) -> bool {
    use rustix::process::{test_kill_process, Pid};
    Pid::from_raw(pid).is_some_and(|pid| test_kill_process(pid).is_ok())
}

/// `cove status`: `{"running":bool,"port":P}` as Hull's `agent status`,
/// plus what `dev.json` says of a dev server that answers. The port is
/// `port` if given, else `dev.json`'s, else 3000.
pub fn status(app_dir: &Path, port: Option<u16>) -> Json {
    let dev = dev_json(app_dir);
    let recorded = dev
        .as_ref()
        .and_then(|d| d["port"].as_u64())
        .and_then(|p| u16::try_from(p).ok());
    let port = port.or(recorded).unwrap_or(DEFAULT_PORT);
    let running = answers(port);
    let mut out = json!({ "running": running, "port": port });
    if let (true, Some(Json::Object(dev))) = (running && recorded == Some(port), dev) {
        for key in ["pid", "started_at", "runtime", "entry", "url", "db"] {
            if let Some(v) = dev.get(key) {
                out[key] = v.clone();
            }
        }
    }
    out
}

/// `cove errors`: the last error, or `{"errors":[]}` (Hull's `agent errors`).
pub fn last_error(app_dir: &Path) -> Json {
    read_json(app_dir, LAST_ERROR).unwrap_or_else(|| json!({ "errors": [] }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_record_means_no_errors_and_the_default_port() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(last_error(dir.path()), json!({ "errors": [] }));
        // Nothing of this test listens on a port it picked and closed.
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        assert_eq!(
            status(dir.path(), Some(port)),
            json!({ "running": false, "port": port })
        );
    }

    #[test]
    fn a_listening_dev_server_is_described() {
        let dir = tempfile::tempdir().unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let dev = json!({ "port": port, "pid": 7, "runtime": "lua", "entry": "app.lua" });
        write_json(dir.path(), DEV, &dev).unwrap();
        let s = status(dir.path(), None);
        assert_eq!(s["running"], true);
        assert_eq!(s["port"], port);
        assert_eq!(s["pid"], 7);
        assert_eq!(s["runtime"], "lua");
        let error = json!({ "event": "request_error", "error": "app.lua:3: boom" });
        write_json(dir.path(), LAST_ERROR, &error).unwrap();
        assert_eq!(last_error(dir.path()), error);
    }
}
