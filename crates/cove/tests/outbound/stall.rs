//! A request in flight must not stall the other connections of its worker:
//! on a one-worker server, `/health` sent while `/fetch` waits on a slow
//! upstream (1.5 s) is answered first. As in tests/crypto.rs, the checks
//! look at which response arrived first, and controls show the stall.

use std::time::Duration;

use super::app;
use crate::util::servers::echo;
use crate::util::{build_request, race, Conn, Server};

/// True if `/health` was answered while `slow_path` was still unanswered.
fn health_beats(server: &Server, slow_path: &str) -> bool {
    let request = build_request("GET", slow_path, &[], None);
    race::health_beats(server, &request, Duration::from_millis(300))
}

#[test]
fn lua_handlers_suspend_on_http() {
    let port = echo(None);
    let server = Server::start(&app("lua"), &["--workers", "1"]);
    let path = format!("/fetch?port={port}");
    // Every handler runs as a coroutine: even its first request suspends.
    for _ in 0..2 {
        assert!(
            health_beats(&server, &path),
            "/health waited:\n{}",
            server.log()
        );
    }
    assert!(
        !health_beats(&server, &format!("/fetch-inline?port={port}")),
        "control: in the script's own coroutine the request runs inline and stalls the worker"
    );
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
