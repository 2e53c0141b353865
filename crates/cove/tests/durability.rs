//! Durability: a write the server acknowledged survives SIGKILL (with group
//! commit and without), and SIGTERM drains, checkpoints the WAL and exits
//! within the drain timeout. Both runtimes (tests/fixtures/durability).
//!
//! The crash tests run 5 times per runtime and mode; `COVE_STRESS=1`
//! (tools/stress) runs them 20 times.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::util::{both, build_request, fixture, Conn, Lang, Server, TIMEOUT};

both!(
    sigkill_loses_no_acknowledged_write,
    sigkill_without_group_commit_loses_no_acknowledged_write,
    sigterm_drains_checkpoints_and_exits_within_the_drain_timeout,
);

const WRITERS: usize = 6;

fn app(lang: Lang) -> PathBuf {
    fixture("durability").with_extension(lang.ext())
}

fn runs() -> usize {
    if std::env::var("COVE_STRESS").is_ok_and(|v| v == "1") {
        20
    } else {
        5
    }
}

/// Clients writing as fast as the server answers, each on its own
/// keep-alive connection, until the server goes away.
struct Writers {
    acked: Arc<AtomicUsize>,
    threads: Vec<JoinHandle<Vec<(i64, String)>>>,
}

impl Writers {
    fn start(port: u16, tag: &str) -> Writers {
        let acked = Arc::new(AtomicUsize::new(0));
        let threads = (0..WRITERS)
            .map(|w| {
                let (acked, tag) = (acked.clone(), tag.to_string());
                thread::spawn(move || write_until_gone(port, &format!("{tag}-w{w}"), &acked))
            })
            .collect();
        Writers { acked, threads }
    }

    /// Wait until `n` writes were acknowledged.
    fn wait_for(&self, n: usize, s: &Server) {
        let start = Instant::now();
        while self.acked.load(Ordering::SeqCst) < n {
            assert!(
                start.elapsed() < TIMEOUT,
                "only {} acks:\n{}",
                self.acked.load(Ordering::SeqCst),
                s.log()
            );
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// Every acknowledged (id, key).
    fn join(self) -> Vec<(i64, String)> {
        self.threads
            .into_iter()
            .flat_map(|t| t.join().expect("writer"))
            .collect()
    }
}

/// Write `<prefix>-<i>` until the server is gone; the acknowledged ones. A
/// request whose connection broke was not acknowledged: its write may or
/// may not have happened.
fn write_until_gone(port: u16, prefix: &str, acked: &AtomicUsize) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    let mut conn: Option<Conn> = None;
    for i in 0.. {
        if conn.is_none() {
            match Conn::try_open(port) {
                Ok(c) => conn = Some(c),
                Err(_) => break, // nothing listens: the server stopped
            }
        }
        let Some(c) = conn.as_mut() else { break };
        let key = format!("{prefix}-{i}");
        match c.try_request("POST", "/items", &[], Some(key.as_bytes())) {
            Ok(r) if r.status == 201 => {
                out.push((r.json()["id"].as_i64().expect("id"), key));
                acked.fetch_add(1, Ordering::SeqCst);
            }
            Ok(r) => panic!("{key}: {} {}", r.status, r.text()),
            // Closed by a drain (reconnect) or a crash (the reconnect fails).
            Err(_) => conn = None,
        }
    }
    out
}

/// Open the database as the next start would (SQLite recovers the WAL) and
/// check it: intact, every acknowledged write there under its id, and each
/// write whole (its two rows, or neither).
fn check(db: &Path, acked: &[(i64, String)]) {
    let db = rusqlite::Connection::open(db).expect("open the database");
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(integrity, "ok");
    let mut find = db.prepare("SELECT id FROM items WHERE key = ?").unwrap();
    let mut logged = db
        .prepare("SELECT count(*) FROM item_log WHERE key = ?")
        .unwrap();
    let mut ids = HashSet::new();
    for (id, key) in acked {
        assert!(ids.insert(*id), "id {id} acknowledged twice");
        let stored: i64 = find
            .query_row([key], |r| r.get(0))
            .unwrap_or_else(|e| panic!("acknowledged write {key} (id {id}) lost: {e}"));
        assert_eq!(stored, *id, "{key}");
        let n: i64 = logged.query_row([key], |r| r.get(0)).unwrap();
        assert_eq!(n, 1, "{key}: its second row is missing");
    }
    let torn: i64 = db
        .query_row(
            "SELECT count(*) FROM items WHERE key NOT IN (SELECT key FROM item_log)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(torn, 0, "writes with one row of two");
}

/// Start, write from every client, SIGKILL mid-stream, check. Each run
/// kills at a different point.
fn crash(lang: Lang, flags: &[&str], run: usize) -> usize {
    let mut args = vec!["--workers", "2"];
    args.extend_from_slice(flags);
    let mut s = Server::start(&app(lang), &args);
    let writers = Writers::start(s.port, &format!("r{run}"));
    writers.wait_for(300 + 97 * run, &s);
    s.signal(libc::SIGKILL);
    let status = s.wait_exit();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    let acked = writers.join();
    check(s.db_path(), &acked);
    acked.len()
}

fn crash_runs(lang: Lang, flags: &[&str]) {
    let mut total = 0;
    for run in 0..runs() {
        total += crash(lang, flags, run);
    }
    eprintln!(
        "{lang:?} {flags:?}: {} SIGKILL runs, {total} acknowledged writes, none lost",
        runs()
    );
}

fn sigkill_loses_no_acknowledged_write(lang: Lang) {
    crash_runs(lang, &[]);
}

fn sigkill_without_group_commit_loses_no_acknowledged_write(lang: Lang) {
    crash_runs(lang, &["--no-group-commit"]);
}

const DRAIN_MS: u64 = 2000;

/// Slack over the drain timeout for the exit: loading nothing, the server
/// only joins its workers and checkpoints. A server that waited for its
/// idle or half-sent connections would take 60 s (their timeouts below).
const EXIT_SLACK: Duration = Duration::from_secs(8);

/// SIGTERM with writers going, a request in flight, an idle keep-alive
/// connection and one stuck halfway through its head: the request in
/// flight is answered, the server exits 0 within the drain timeout, every
/// acknowledged write is there, and the WAL is checkpointed (empty or gone).
fn sigterm_drains_checkpoints_and_exits_within_the_drain_timeout(lang: Lang) {
    let drain = DRAIN_MS.to_string();
    let mut s = Server::start(
        &app(lang),
        &[
            "--workers",
            "2",
            "--drain-timeout",
            &drain,
            "--idle-timeout",
            "60000",
            "--header-timeout",
            "60000",
        ],
    );
    let mut idle = s.conn();
    assert_eq!(idle.request("GET", "/health", &[], None).status, 200);
    let mut stuck = s.conn();
    stuck.send(b"POST /items HTTP/1.1\r\nHost: x\r\n");
    let writers = Writers::start(s.port, "t");
    writers.wait_for(200, &s);
    let mut slow = s.conn();
    slow.send(&build_request("POST", "/slow", &[], Some(b"slow-1")));
    s.wait_for_log("slow started");

    let signalled = Instant::now();
    s.signal(libc::SIGTERM);
    let r = slow.read_response();
    assert_eq!(r.status, 201, "the request in flight: {}", r.text());
    let slow_id = r.json()["id"].as_i64().expect("id");
    let status = s.wait_exit();
    let took = signalled.elapsed();
    eprintln!("{lang:?}: SIGTERM to exit {took:?} (drain timeout {DRAIN_MS} ms)");
    assert_eq!(status.code(), Some(0), "{}", s.log());
    assert!(
        took < Duration::from_millis(DRAIN_MS) + EXIT_SLACK,
        "exit took {took:?} with a {DRAIN_MS} ms drain timeout:\n{}",
        s.log()
    );
    assert!(s.log().contains("server stopped"), "{}", s.log());

    let wal = PathBuf::from(format!("{}-wal", s.db_path().display()));
    let wal_len = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    assert_eq!(wal_len, 0, "the WAL was not checkpointed");
    let mut acked = writers.join();
    acked.push((slow_id, "slow-1".into()));
    check(s.db_path(), &acked);
}
