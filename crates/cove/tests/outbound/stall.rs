//! A request in flight must not stall the other connections of its worker:
//! on a one-worker server, `/health` sent while `/fetch` waits on a slow
//! upstream (1.5 s) is answered first. As in tests/crypto.rs, the checks
//! look at which response arrived first, and controls show the stall.

use std::io::Write;
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use super::app;
use crate::util::servers::echo;
use crate::util::{build_request, Conn, Server};

fn ready(s: &TcpStream) -> bool {
    matches!(s.peek(&mut [0u8; 1]), Ok(n) if n > 0)
}

/// True if `/health` was answered while `slow_path` was still unanswered.
fn health_beats(server: &Server, slow_path: &str) -> bool {
    let connect = || TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    let mut slow = connect();
    slow.write_all(&build_request("GET", slow_path, &[], None))
        .expect("send slow request");
    thread::sleep(Duration::from_millis(300));
    let mut health = connect();
    health
        .write_all(&build_request("GET", "/health", &[], None))
        .expect("send /health");
    for s in [&slow, &health] {
        s.set_nonblocking(true).expect("non-blocking");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let slow_ready = ready(&slow);
        if ready(&health) {
            return !slow_ready;
        }
        if slow_ready {
            return false;
        }
        thread::sleep(Duration::from_millis(1));
    }
    panic!("neither request was answered:\n{}", server.log());
}

#[test]
fn lua_handlers_suspend_on_http() {
    let port = echo(None);
    let server = Server::start(&app("lua"), &["--workers", "1"]);
    let path = format!("/fetch?port={port}");
    // The app lists hosts, so even the handler's first request suspends
    // (the control, a stalling sync call, is the JS test's `/fetch-sync`).
    for _ in 0..2 {
        assert!(
            health_beats(&server, &path),
            "/health waited:\n{}",
            server.log()
        );
    }
    let res = Conn::open(server.port).request("GET", &path, &[], None);
    assert_eq!(res.json()["body"], "slow done", "{}", res.text());
}

#[test]
fn js_awaited_http_does_not_stall() {
    let port = echo(None);
    let server = Server::start(&app("js"), &["--workers", "1"]);
    assert!(
        health_beats(&server, &format!("/fetch?port={port}")),
        "/health waited:\n{}",
        server.log()
    );
    assert!(
        !health_beats(&server, &format!("/fetch-sync?port={port}")),
        "control: Hull's synchronous http.get stalls the worker"
    );
}
