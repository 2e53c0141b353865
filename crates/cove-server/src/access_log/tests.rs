//! The access log end to end: lines reach the file, on time, across
//! reopens and stops.

use std::path::Path;
use std::time::{Duration, Instant};

use hyper::Version;

use super::request_id::RequestId;
use super::*;

fn entry(rid: &str) -> Entry<'_> {
    Entry {
        time: Duration::from_millis(1_764_307_515_123),
        remote: Some("203.0.113.7:40000".parse().unwrap()),
        method: "GET",
        target: "/users/42?tab=posts",
        version: Version::HTTP_11,
        status: 200,
        bytes: Some(5120),
        duration: Duration::from_micros(830),
        route: Some("/users/:id"),
        worker: 1,
        request_id: RequestId::Client(rid),
        referer: None,
        user_agent: Some("curl/8.5.0"),
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn file_log(dir: &tempfile::TempDir, format: Format) -> (AccessLog, std::path::PathBuf) {
    let path = dir.path().join("access.log");
    let log = AccessLog::open(Target::File(path.clone()), format).unwrap();
    (log, path)
}

#[test]
fn parses_formats_and_targets() {
    assert_eq!("combined".parse::<Format>().unwrap(), Format::Combined);
    assert_eq!("json".parse::<Format>().unwrap(), Format::Json);
    let e = "JSON".parse::<Format>().unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown access log format \"JSON\" (expected combined or json)"
    );
    assert_eq!("stdout".parse::<Target>().unwrap(), Target::Stdout);
    assert_eq!(
        "/var/log/cove.log".parse::<Target>().unwrap(),
        Target::File("/var/log/cove.log".into())
    );
    assert!("".parse::<Target>().is_err());
}

#[test]
fn flush_and_stop_writes_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let (log, path) = file_log(&dir, Format::Combined);
    let w = log.worker();
    for rid in ["r1", "r2", "r3"] {
        w.log(&entry(rid));
    }
    log.flush_and_stop();
    let text = read(&path);
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.starts_with(
        "203.0.113.7 - - [28/Nov/2025:05:25:15 +0000] \"GET /users/42?tab=posts HTTP/1.1\" \
         200 5120 \"-\" \"curl/8.5.0\" rid=r1 route=/users/:id dur_ms=0.830 w=1\n"
    ));
    // The file is not world-readable.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o037, 0, "{mode:o}");
    // Stopping twice, and flushing a stopped log, return.
    log.flush_and_stop();
    log.flush();
}

#[test]
fn dropping_the_last_handle_writes_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let (log, path) = file_log(&dir, Format::Json);
    let w = log.worker();
    drop(log);
    w.log(&entry("after-the-log-handle"));
    drop(w);
    let text = read(&path);
    assert!(
        text.contains("\"request_id\":\"after-the-log-handle\""),
        "{text}"
    );
}

#[test]
fn a_quiet_workers_line_is_written_soon() {
    let dir = tempfile::tempdir().unwrap();
    let (log, path) = file_log(&dir, Format::Json);
    let w = log.worker();
    let start = Instant::now();
    w.log(&entry("lonely"));
    while !read(&path).contains("lonely") {
        assert!(start.elapsed() < Duration::from_secs(2), "not written");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Within a round (100 ms) and its writing; loose for loaded machines.
    assert!(start.elapsed() < Duration::from_millis(1000));
}

#[test]
fn many_workers_lines_stay_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (log, path) = file_log(&dir, Format::Json);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let w = log.worker();
            std::thread::spawn(move || {
                for i in 0..10_000 {
                    w.log(&entry(&format!("{t}-{i}")));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    log.flush();
    let text = read(&path);
    let mut ids = std::collections::HashSet::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(ids.insert(v["request_id"].as_str().unwrap().to_string()));
    }
    assert_eq!(ids.len(), 40_000);
    assert_eq!(log.dropped(), 0);
}

#[test]
fn reopen_after_a_rename_loses_no_line() {
    let dir = tempfile::tempdir().unwrap();
    let (log, path) = file_log(&dir, Format::Combined);
    let w = log.worker();
    w.log(&entry("before-1"));
    w.log(&entry("before-2"));
    // logrotate: rename, then signal. Lines logged in between go to the
    // renamed file (the writer still holds it open).
    let rotated = dir.path().join("access.log.1");
    std::fs::rename(&path, &rotated).unwrap();
    w.log(&entry("between"));
    log.flush();
    log.reopen();
    w.log(&entry("after-1"));
    w.log(&entry("after-2"));
    log.flush();
    let old = read(&rotated);
    let new = read(&path);
    let ids = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                l.split(" rid=")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(ids(&old), ["before-1", "before-2", "between"]);
    assert_eq!(ids(&new), ["after-1", "after-2"]);
}

#[test]
fn a_writer_far_behind_drops_and_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("access.log");
    let log = AccessLog::open_limited(Target::File(path.clone()), Format::Combined, 1024).unwrap();
    let w = log.worker();
    for i in 0..1000 {
        w.log(&entry(&i.to_string()));
    }
    log.flush();
    let written = read(&path).lines().count() as u64;
    assert!(log.dropped() > 0);
    assert_eq!(written + log.dropped(), 1000);
}

#[tokio::test]
async fn sigusr1_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let (log, path) = file_log(&dir, Format::Combined);
    tokio::spawn(log.reopen_on_sigusr1().unwrap());
    let w = log.worker();
    w.log(&entry("old"));
    log.flush();
    let rotated = dir.path().join("access.log.1");
    std::fs::rename(&path, &rotated).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-USR1", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // The reopen creates the file, before any new line.
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < Duration::from_secs(5), "not reopened");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    w.log(&entry("new"));
    log.flush();
    assert!(read(&rotated).contains("rid=old"));
    assert!(read(&path).contains("rid=new"));
}

/// The worker's cost per line (format + hand-off), in release:
/// `cargo test --release -p cove-server access_log::tests::cost -- --ignored --nocapture`.
/// Under `valgrind --tool=callgrind --toggle-collect='*WorkerLog*log*'`
/// (instructions per `WorkerLog::log`, 200k lines each, `COST=json-curl`
/// and so on to run one): combined 961 (curl-like: short user agent, no
/// referer, a made id) and 1,193 (browser-like, the client's id); JSON
/// 1,155 and 1,447. Before the made id was written as hex in place, the
/// method went unscanned and keys were merged with their punctuation:
/// 1,140 (with a client id), 1,435, 1,415 and 1,710. Of these, the mutex
/// and the hand-off are ~50; the rest is formatting, ~50-100 per escaped
/// string and ~30-50 per number.
#[test]
#[ignore]
fn cost() {
    let dir = tempfile::tempdir().unwrap();
    let browser = Entry {
        user_agent: Some("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"),
        referer: Some("https://example.com/users"),
        ..entry("0123456789abcdef01234567")
    };
    // A made id, as most requests have.
    let curl = Entry {
        request_id: RequestId::Made(super::request_id::generate()),
        ..entry("")
    };
    for (format, what, e) in [
        (Format::Combined, "browser", &browser),
        (Format::Json, "browser", &browser),
        (Format::Combined, "curl", &curl),
        (Format::Json, "curl", &curl),
    ] {
        // `COST=curl` (or `browser`, or `json-curl`) runs one kind, e.g.
        // under callgrind.
        if std::env::var("COST")
            .is_ok_and(|only| only != what && only != format!("{format}-{what}"))
        {
            continue;
        }
        let (log, _path) = file_log(&dir, format);
        let w = log.worker();
        // Timed in rounds of 10k lines with a flush between (untimed), so
        // the writer keeps up and no line is dropped.
        let (rounds, per) = (20, 10_000);
        let mut took = Duration::ZERO;
        for _ in 0..rounds {
            let start = Instant::now();
            for _ in 0..per {
                w.log(std::hint::black_box(e));
            }
            took += start.elapsed();
            log.flush();
        }
        log.flush_and_stop();
        assert_eq!(log.dropped(), 0);
        let n = (rounds * per) as f64;
        println!(
            "{format} {what}: {:.1} ns per line",
            took.as_nanos() as f64 / n
        );
    }
}
