//! Body size and instruction limits.

use serde_json::json;

use crate::util::{example_file, fixture, Server};

#[test]
fn declared_body_over_1_mib_is_413() {
    let s = Server::fixture("basic", &[]);
    let mut conn = s.conn();
    // Only the head: the server must answer from Content-Length alone.
    conn.send(b"POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n");
    let r = conn.read_response();
    assert_eq!((r.status, r.text().as_str()), (413, "Payload Too Large"));
    // Exactly the limit is fine.
    let body = vec![b'x'; 1 << 20];
    let r = s.request("POST", "/body", &[], Some(&body));
    assert_eq!((r.status, r.json()), (200, json!({"len": 1 << 20})));
}

#[test]
fn max_body_flag_sets_the_limit() {
    let s = Server::fixture("basic", &["--max-body", "1k"]);
    let r = s.request("POST", "/body", &[], Some(&[b'a'; 2048]));
    assert_eq!(r.status, 413);
    let r = s.request("POST", "/body", &[], Some(&[b'a'; 512]));
    assert_eq!((r.status, r.json()), (200, json!({"len": 512})));
    let r = s.request("POST", "/body", &[], Some(&[b'a'; 1024]));
    assert_eq!(r.json(), json!({"len": 1024}));
}

#[test]

fn chunked_body_over_the_limit_is_413() {
    let s = Server::fixture("basic", &["--max-body", "1k"]);
    let mut conn = s.conn();
    let mut req = b"POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..4 {
        req.extend_from_slice(b"200\r\n");
        req.extend_from_slice(&[b'c'; 0x200]);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    conn.send(&req);
    let r = conn.read_response();
    assert_eq!((r.status, r.text().as_str()), (413, "Payload Too Large"));
    assert_eq!(s.get("/health").status, 200);
}

#[test]
fn chunked_body_in_one_oversized_chunk_is_413() {
    let s = Server::fixture("basic", &["--max-body", "1k"]);
    let mut conn = s.conn();
    let mut req =
        b"POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n".to_vec();
    req.extend_from_slice(&[b'c'; 0x800]);
    req.extend_from_slice(b"\r\n0\r\n\r\n");
    conn.send(&req);
    let r = conn.read_response();
    assert_eq!((r.status, r.text().as_str()), (413, "Payload Too Large"));
    // Under the limit, chunked bodies are read whole.
    let mut conn = s.conn();
    conn.send(b"POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n200\r\n");
    conn.send(&[b'c'; 0x200]);
    conn.send(b"\r\n0\r\n\r\n");
    assert_eq!(conn.read_response().json(), json!({"len": 512}));
}

/// `budget`: 1M is counted from the first instruction, the default (100M)
/// once a call has run 10 ms (crates/cove-lua/src/budget.rs).
fn assert_loop_is_stopped(path: &str, budget: &str) {
    let s = Server::fixture("basic", &["--workers", "1", "--max-instructions", budget]);
    let mut conn = s.conn();
    let r = conn.request("GET", path, &[], None);
    assert_eq!(
        (r.status, r.text().as_str()),
        (500, "Internal Server Error")
    );
    s.wait_for_log(&format!(
        "instruction limit exceeded ({budget} instructions per call"
    ));
    // The same (only) worker answers again, on a new connection and the old one.
    assert_eq!(s.get("/health").status, 200);
    assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
    let r = conn.request("GET", path, &[], None);
    assert_eq!(r.status, 500, "the budget is reset per call, not used up");
}

#[test]
fn infinite_loop_hits_the_instruction_limit() {
    assert_loop_is_stopped("/loop", "1000000");
    assert_loop_is_stopped("/loop", "100000000");
}

#[test]
fn pcall_cannot_swallow_the_instruction_limit() {
    assert_loop_is_stopped("/pcall-loop", "1000000");
    assert_loop_is_stopped("/pcall-loop", "100000000");
}

#[test]
fn loops_in_coroutines_hit_the_instruction_limit() {
    for budget in ["1000000", "100000000"] {
        assert_loop_is_stopped("/coroutine-loop", budget);
        assert_loop_is_stopped("/wrap-loop", budget);
    }
}

/// How often the server's threads have gone to sleep so far, all together.
fn sleeps(s: &Server) -> u64 {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", s.pid())).expect("/proc");
    tasks
        .flatten()
        .map(|task| {
            let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
            status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
                .unwrap_or(0)
        })
        .sum()
}

/// No thread of an idle server wakes: the Lua budget's watchdog, which ticks
/// every 10 ms while calls run (~0.5% of a core), parks after 100 ms
/// without one.
#[test]
fn an_idle_server_wakes_no_thread() {
    for app in [fixture("basic"), example_file("hello", "js")] {
        let s = Server::start(&app, &["--workers", "1"]);
        assert_eq!(s.get("/health").status, 200);
        std::thread::sleep(std::time::Duration::from_millis(500));
        let before = sleeps(&s);
        std::thread::sleep(std::time::Duration::from_secs(1));
        let woke = sleeps(&s) - before;
        assert!(
            woke <= 2,
            "{}: idle, its threads woke {woke} times in a second",
            app.display()
        );
    }
}

/// The call that unparks the watchdog is still stopped at its budget.
#[test]
fn a_loop_after_idle_time_hits_the_instruction_limit() {
    let s = Server::fixture("basic", &["--workers", "1"]);
    assert_eq!(s.get("/health").status, 200);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(s.get("/loop").status, 500);
    s.wait_for_log("instruction limit exceeded (100000000 instructions per call");
    assert_eq!(s.get("/health").status, 200);
}

#[test]
fn heap_cap_stops_a_runaway_allocation_and_the_worker_recovers() {
    let s = Server::fixture("basic", &["--workers", "1", "-m", "16m"]);
    let r = s.get("/hog");
    assert_eq!(
        (r.status, r.text().as_str()),
        (500, "Internal Server Error")
    );
    s.wait_for_log("not enough memory");
    // The garbage is collected and the same worker serves on.
    for _ in 0..3 {
        assert_eq!(s.get("/health").status, 200);
        assert_eq!(s.get("/json/big").status, 200);
    }
    assert_eq!(s.get("/hog").status, 500, "the cap holds a second time");
}
