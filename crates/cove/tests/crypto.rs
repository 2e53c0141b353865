//! A password hash in flight must not stall the other requests of its
//! worker (issue 6): on a one-worker server, a `/health` sent while a slow
//! `/verify` runs is answered while `/verify` is still unanswered. The
//! checks look at which response has arrived — never at absolute times. Each has a control that
//! shows the stall the suspension removes, so the check can fail.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use crate::util::{build_request, race, Conn, Server};

/// A stored hash of "hunter2" at Hull's 100,000 iterations (checked against
/// Python's hashlib in cove-caps' unit tests).
const STORED: &str = "pbkdf2:100000:000102030405060708090a0b0c0d0e0f:\
844d6e092def956a3d2773e41d721bf2d95a1d8f524d970ca76cd20528a03679";

fn app(ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/slowhash")
        .join(format!("app.{ext}"))
}

/// The same at 3,000,000 iterations, for an optimized binary (`slow_stored`).
const STORED_3M: &str = "pbkdf2:3000000:000102030405060708090a0b0c0d0e0f:\
c5be1cc38a83b6ce3dc1f20714b6312eab582690569d463f1d01954a76e28b7f";

/// The race's head start: time for the worker to pick the slow request up.
const HEAD_START: Duration = Duration::from_millis(150);

/// A stored hash whose check takes far longer than [`HEAD_START`] on the
/// binary under test. Hull's 100,000 iterations take ~1.4 s in the debug
/// build but ~15 ms in the release one (`COVE_BIN`, see util::bin), which
/// gets 30 times as many. Timed on `inline_path`, which never suspends, so
/// that the race's hash is still the server's first suspended one.
fn slow_stored(server: &Server, inline_path: &str) -> &'static str {
    let start = Instant::now();
    let res = Conn::open(server.port).request("POST", inline_path, &[], Some(STORED.as_bytes()));
    assert_eq!(res.json()["ok"], true, "{}", server.log());
    if start.elapsed() >= 5 * HEAD_START {
        STORED
    } else {
        STORED_3M
    }
}

/// `/health` answered while a POST of `stored` to `slow_path` was not.
fn health_beats(server: &Server, slow_path: &str, stored: &str) -> bool {
    let request = build_request("POST", slow_path, &[], Some(stored.as_bytes()));
    race::health_beats(server, &request, HEAD_START)
}

#[test]
fn lua_handlers_suspend_on_slow_crypto() {
    let server = Server::start(&app("lua"), &["--workers", "1"]);
    let stored = slow_stored(&server, "/verify-inline");
    // Every handler runs as a coroutine: its very first hash suspends.
    assert!(
        health_beats(&server, "/verify", stored),
        "/health waited for the first hash:\n{}",
        server.log()
    );
    assert!(
        !health_beats(&server, "/verify-inline", stored),
        "control: in the script's own coroutine the hash runs inline and stalls the worker"
    );
    let mut conn = Conn::open(server.port);
    let res = conn.request("POST", "/hash", &[], Some(b"pw"));
    assert_eq!(res.json()["prefix"], "pbkdf2:100000:");
    assert_eq!(res.json()["ok"], true);
}

#[test]
fn a_resumed_lua_handler_reads_its_own_request() {
    let server = Server::start(&app("lua"), &["--workers", "1"]);
    let stored = slow_stored(&server, "/verify-inline");
    let mut slow = Conn::open(server.port);
    slow.send(&build_request(
        "POST",
        "/verify/slow?tag=q-slow",
        &[("x-tag", "h-slow")],
        Some(stored.as_bytes()),
    ));
    thread::sleep(HEAD_START);
    // Runs (and makes its own req) while the hash of the first one is in flight.
    let mut other = Conn::open(server.port);
    let res = other.request(
        "POST",
        "/verify/other?tag=q-other",
        &[],
        Some(b"not a hash"),
    );
    assert_eq!(res.json()["tag"], "q-other", "{}", server.log());
    let res = slow.read_response();
    assert_eq!(res.status, 200, "{}\n{}", res.text(), server.log());
    let body = res.json();
    assert_eq!(body["ok"], true);
    assert_eq!(body["who"], "slow");
    assert_eq!(body["tag"], "q-slow");
    assert_eq!(body["agent"], "h-slow");
}

/// A request whose middleware waited on a hash, and meanwhile another
/// request started: its handler gets its own `req` (in JS it got the other
/// request's).
#[test]
fn a_handler_after_waiting_middleware_reads_its_own_request() {
    for ext in ["lua", "js"] {
        handler_after_waiting_middleware(ext);
    }
}

fn handler_after_waiting_middleware(ext: &str) {
    let server = Server::start(&app(ext), &["--workers", "1"]);
    let inline = if ext == "lua" {
        "/verify-inline"
    } else {
        "/verify-sync"
    };
    let stored = slow_stored(&server, inline);
    let mut slow = Conn::open(server.port);
    slow.send(&build_request(
        "POST",
        "/mw/slow?tag=q-slow",
        &[],
        Some(stored.as_bytes()),
    ));
    thread::sleep(HEAD_START);
    let mut other = Conn::open(server.port);
    let res = other.request("POST", "/mw/other?tag=q-other", &[], Some(b"not a hash"));
    assert_eq!(res.json()["tag"], "q-other", "{ext}: {}", server.log());
    let res = slow.read_response();
    assert_eq!(res.status, 200, "{ext}: {}\n{}", res.text(), server.log());
    let body = res.json();
    assert_eq!(body["ok"], true, "{ext}");
    assert_eq!(body["who"], "slow", "{ext}");
    assert_eq!(body["tag"], "q-slow", "{ext}");
    assert_eq!(body["path"], "/mw/slow", "{ext}");
}

#[test]
fn js_awaited_crypto_does_not_stall() {
    let server = Server::start(&app("js"), &["--workers", "1"]);
    let stored = slow_stored(&server, "/verify-sync");
    assert!(
        health_beats(&server, "/verify", stored),
        "/health waited for the hash:\n{}",
        server.log()
    );
    assert!(
        !health_beats(&server, "/verify-sync", stored),
        "control: Hull's synchronous verifyPassword stalls the worker"
    );
    let mut conn = Conn::open(server.port);
    let res = conn.request("POST", "/hash", &[], Some(b"pw"));
    assert_eq!(res.json()["prefix"], "pbkdf2:100000:");
    assert_eq!(res.json()["ok"], true);
}

#[test]
fn a_resumed_lua_handler_keeps_errors_budget_and_batches() {
    let server = Server::start(
        &app("lua"),
        &["--workers", "1", "--max-instructions", "1000000"],
    );
    let mut conn = Conn::open(server.port);
    // Twice each: a coroutine that raised or ran out of budget is dropped,
    // and the next call gets a working one.
    for _ in 0..2 {
        let res = conn.request("POST", "/then-error", &[], Some(STORED.as_bytes()));
        assert_eq!(res.status, 500);
        let res = conn.request("POST", "/then-loop", &[], Some(STORED.as_bytes()));
        assert_eq!(res.status, 500);
        let res = conn.request("POST", "/in-batch", &[], Some(STORED.as_bytes()));
        assert_eq!(res.json()["ok"], true, "{}", res.text());
    }
    let line = crate::util::line_of(&app("lua"), "error(\"after the hash\")");
    server.wait_for_log_count(&format!("app.lua:{line}: after the hash"), 2);
    let log = server.wait_for_log_count("instruction limit exceeded", 2);
    assert_eq!(
        log.matches(&format!("app.lua:{line}: after the hash"))
            .count(),
        2,
        "{log}"
    );
    assert_eq!(
        log.matches("instruction limit exceeded").count(),
        2,
        "{log}"
    );
}
