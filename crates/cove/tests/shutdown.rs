//! SIGTERM/SIGINT: drain, exit 0, and keep every acknowledged write.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::util::{build_request, Conn, Server};

/// Insert until the server goes away; returns the acknowledged (id, name) pairs.
fn insert_until_gone(port: u16, t: usize, acked: Arc<AtomicUsize>) -> Vec<(i64, String)> {
    let mut out = Vec::new();
    let mut conn = None;
    for i in 0..1_000_000 {
        if conn.is_none() {
            match Conn::try_open(port) {
                Ok(c) => conn = Some(c),
                Err(_) => break, // listener closed: the server is stopping
            }
        }
        let c = conn.as_mut().unwrap();
        let name = format!("t{t}-{i}");
        match c.try_request("POST", "/items", &[], Some(name.as_bytes())) {
            Ok(r) if r.status == 201 => {
                out.push((r.json()["id"].as_i64().expect("id"), name));
                acked.fetch_add(1, Ordering::SeqCst);
            }
            // A connection closed by the drain: not acknowledged; reconnect.
            _ => conn = None,
        }
    }
    out
}

#[test]
fn sigterm_mid_load_keeps_every_acknowledged_insert() {
    let mut s = Server::fixture("db", &["--workers", "2"]);
    let acked = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..4)
        .map(|t| {
            let (port, acked) = (s.port, acked.clone());
            thread::spawn(move || insert_until_gone(port, t, acked))
        })
        .collect();
    while acked.load(Ordering::SeqCst) < 200 {
        thread::sleep(Duration::from_millis(5));
    }
    s.signal(libc::SIGTERM);
    let status = s.wait_exit();
    assert_eq!(status.code(), Some(0), "{}", s.log());
    assert!(s.log().contains("server stopped"), "{}", s.log());

    let mut all: HashMap<i64, String> = HashMap::new();
    for c in clients {
        for (id, name) in c.join().expect("client thread") {
            assert!(all.insert(id, name).is_none(), "id {id} acknowledged twice");
        }
    }
    assert!(all.len() >= 200);
    let db = rusqlite::Connection::open(s.db_path()).unwrap();
    for (id, name) in &all {
        let stored: String = db
            .query_row("SELECT name FROM items WHERE id = ?", [id], |r| r.get(0))
            .unwrap_or_else(|e| panic!("acknowledged id {id} missing: {e}"));
        assert_eq!(&stored, name);
    }
}

#[test]
fn sigint_when_idle_exits_0() {
    let mut s = Server::fixture("basic", &[]);
    let mut conn = s.conn();
    assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
    s.signal(libc::SIGINT);
    assert_eq!(s.wait_exit().code(), Some(0), "{}", s.log());
    s.wait_for_log("server stopped");
    // The idle keep-alive connection was closed by the drain.
    assert!(conn.closed_by_server());
}

#[test]
fn in_flight_request_finishes_during_drain() {
    let mut s = Server::fixture("basic", &["--workers", "1"]);
    let mut conn = s.conn();
    conn.send(&build_request("GET", "/slow", &[], None));
    // The handler logs when it starts, then computes for a while.
    s.wait_for_log("slow started");
    s.signal(libc::SIGTERM);
    let r = conn.read_response();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["x"], 4_500_001_500_000_i64);
    assert_eq!(s.wait_exit().code(), Some(0), "{}", s.log());
}
