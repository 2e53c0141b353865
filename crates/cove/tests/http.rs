//! The HTTP/1.1 layer: malformed requests, keep-alive, pipelining, errors.

use serde_json::json;

use crate::util::{build_request, fixture, line_of, Server};

fn basic() -> Server {
    Server::fixture("basic", &[])
}

#[test]

fn garbage_request_line_is_400() {
    let s = basic();
    let mut conn = s.conn();
    conn.send(b"GARBAGE\r\n\r\n");
    assert_eq!(conn.read_response().status, 400);
    // The server is fine afterwards.
    assert_eq!(s.get("/health").status, 200);
}

#[test]

fn bad_header_line_is_400() {
    let s = basic();
    let mut conn = s.conn();
    conn.send(b"GET /health HTTP/1.1\r\nHost: x\r\nthis is not a header\r\n\r\n");
    assert_eq!(conn.read_response().status, 400);
}

#[test]
fn throwing_handler_is_500_then_the_connection_goes_on() {
    let s = basic();
    let mut conn = s.conn();
    let r = conn.request("GET", "/throw", &[], None);
    assert_eq!(r.status, 500);
    assert_eq!(r.reason, "Internal Server Error");
    assert_eq!(r.text(), "Internal Server Error");
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let r = conn.request("GET", "/health", &[], None);
    assert_eq!((r.status, r.json()), (200, json!({"status": "ok"})));
    // The log names the script line.
    let line = line_of(&fixture("basic"), "marker: throw");
    s.wait_for_log(&format!("app.lua:{line}: handler boom"));
}

#[test]
fn keep_alive_serves_many_requests_on_one_connection() {
    let s = basic();
    let mut conn = s.conn();
    for i in 0..20 {
        let r = conn.request("GET", &format!("/query?i={i}"), &[], None);
        assert_eq!(r.json(), json!({"i": i.to_string()}));
    }
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let s = basic();
    let mut conn = s.conn();
    let mut batch = Vec::new();
    batch.extend(build_request("GET", "/query?i=1", &[], None));
    batch.extend(build_request("POST", "/body", &[], Some(b"abc")));
    batch.extend(build_request("GET", "/query?i=3", &[], None));
    conn.send(&batch);
    assert_eq!(conn.read_response().json(), json!({"i": "1"}));
    assert_eq!(conn.read_response().json(), json!({"len": 3}));
    assert_eq!(conn.read_response().json(), json!({"i": "3"}));
    // Still usable afterwards.
    assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
}

#[test]
fn chunked_request_body_is_read() {
    let s = basic();
    let mut conn = s.conn();
    conn.send(
        b"POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
          3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n",
    );
    assert_eq!(conn.read_response().json(), json!({"len": 7}));
}
