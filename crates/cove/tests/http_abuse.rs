//! Hostile and slow HTTP clients (issue 38): oversized heads and URLs,
//! smuggling attempts, broken framing, pipelining floods, bodies over the
//! limit, and heads that trickle in or never come. The limits and their
//! flags are in docs/security.md ("HTTP limits and timeouts").

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;

use crate::util::{both, build_request, example_file, Conn, Lang, Server, TIMEOUT};

fn basic(extra: &[&str]) -> Server {
    Server::fixture("basic", extra)
}

fn open(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(TIMEOUT)).unwrap();
    s.set_write_timeout(Some(TIMEOUT)).unwrap();
    s
}

/// Everything the server sends on `s` until it closes the connection;
/// panics if it keeps it open (the read times out).
fn until_closed(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    match s.read_to_end(&mut got) {
        Ok(_) => {}
        // The server closed with request bytes still unread (the rest of
        // an oversized head): what it sent before is still read.
        Err(e) if e.kind() == ErrorKind::ConnectionReset && !got.is_empty() => {}
        Err(e) => panic!("the server kept the connection open ({e}); got {got:?}"),
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Send `bytes` on a new connection and return all the server sent until
/// it closed the connection. A server may answer and close before it has
/// read everything (that is the point of a limit): a failed write is fine.
fn exchange(port: u16, bytes: &[u8]) -> String {
    let mut s = open(port);
    let _ = s.write_all(bytes);
    until_closed(&mut s)
}

fn status_of(response: &str) -> u16 {
    response
        .strip_prefix("HTTP/1.1 ")
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not a response: {response:?}"))
}

/// Only one response in `got`, and it tells the client the connection closes.
fn assert_one_closing(got: &str, status: u16) {
    assert_eq!(status_of(got), status, "{got}");
    assert_eq!(
        got.matches("HTTP/1.1 ").count(),
        1,
        "one response only: {got}"
    );
    assert!(
        got.to_ascii_lowercase()
            .contains("\r\nconnection: close\r\n"),
        "{got}"
    );
}

fn head_with_header_of(len: usize) -> Vec<u8> {
    let mut req = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec();
    req.resize(req.len() + len, b'a');
    req.extend_from_slice(b"\r\n\r\n");
    req
}

#[test]
fn a_header_block_over_64_kib_is_431_and_the_connection_closes() {
    let s = basic(&[]);
    assert_one_closing(&exchange(s.port, &head_with_header_of(64 * 1024)), 431);
    // Far over hyper's own read buffer (~400 KiB) the client still reads
    // the 431 rather than a reset.
    assert_one_closing(&exchange(s.port, &head_with_header_of(2 << 20)), 431);
    // Just under the limit is served.
    let r = s.request("GET", "/health", &[("X-Big", &"a".repeat(60 * 1024))], None);
    assert_eq!(r.status, 200);
}

#[test]
fn max_header_sets_the_head_limit() {
    let s = basic(&["--max-header", "4k"]);
    assert_one_closing(&exchange(s.port, &head_with_header_of(5000)), 431);
    let r = s.request("GET", "/health", &[("X-Big", &"a".repeat(3000))], None);
    assert_eq!(r.status, 200);
    let s = basic(&["--max-header", "1m"]);
    let r = s.request(
        "GET",
        "/health",
        &[("X-Big", &"a".repeat(600 * 1024))],
        None,
    );
    assert_eq!(
        r.status, 200,
        "above hyper's default buffer, within the flag"
    );
}

#[test]
fn more_than_100_headers_is_431() {
    let s = basic(&[]);
    let mut req = b"GET /health HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..100 {
        req.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    req.extend_from_slice(b"\r\n");
    assert_one_closing(&exchange(s.port, &req), 431);
    let many: Vec<(String, &str)> = (0..99).map(|i| (format!("X-{i}"), "v")).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    assert_eq!(s.request("GET", "/health", &many, None).status, 200);
}

#[test]
fn a_url_over_8_kib_is_414_and_the_connection_closes() {
    let s = basic(&[]);
    let long = format!("/query?i={}", "1".repeat(8 * 1024));
    let got = exchange(s.port, &build_request("GET", &long, &[], None));
    assert_one_closing(&got, 414);
    assert!(got.ends_with("URI Too Long"), "{got}");
    let fits = format!("/query?i={}", "1".repeat(8 * 1024 - 9));
    let r = s.get(&fits);
    assert_eq!(
        (r.status, r.json()["i"].as_str().unwrap().len()),
        (200, 8 * 1024 - 9)
    );
}

#[test]
fn max_url_sets_the_url_limit() {
    let s = basic(&["--max-url", "100"]);
    let got = exchange(
        s.port,
        &build_request("GET", &format!("/query?i={}", "1".repeat(100)), &[], None),
    );
    assert_one_closing(&got, 414);
    assert_eq!(s.get(&format!("/query?i={}", "1".repeat(50))).status, 200);
}

#[test]
fn http_1_1_without_host_is_400_and_http_1_0_without_host_is_served() {
    let s = basic(&[]);
    assert_one_closing(&exchange(s.port, b"GET /health HTTP/1.1\r\n\r\n"), 400);
    assert_one_closing(
        &exchange(
            s.port,
            b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        ),
        400,
    );
    let got = exchange(s.port, b"GET /health HTTP/1.0\r\n\r\n");
    assert!(got.starts_with("HTTP/1.0 200 OK\r\n"), "{got}");
}

const CL_TE: [&str; 2] = [
    "Content-Length: 3\r\nTransfer-Encoding: chunked",
    "Transfer-Encoding: chunked\r\nContent-Length: 3",
];

/// A POST with both framing headers in `head`, a 5-byte chunked body, and
/// then what a proxy that framed it by its `Content-Length` would forward
/// as a second request (request smuggling).
fn smuggling(head: &str) -> String {
    format!(
        "POST /body HTTP/1.1\r\nHost: x\r\n{head}\r\n\r\n5\r\nabcde\r\n0\r\n\r\n\
         GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
    )
}

/// RFC 9112 §6.3 lets a server refuse a request with both `Content-Length`
/// and `Transfer-Encoding`, and Cove does (hyper would frame it by the
/// chunks and close after; Cove spots the pair in the head as it is read,
/// timeouts.rs): 400, the connection closed, and the bytes after the head
/// are never read as a request. On a kept-alive connection too, and with
/// the head split across writes.
#[test]
fn content_length_with_transfer_encoding_is_400_and_the_connection_closes() {
    let s = basic(&[]);
    for head in CL_TE {
        let got = exchange(s.port, smuggling(head).as_bytes());
        assert_one_closing(&got, 400);
        assert!(got.ends_with("Bad Request"), "{got}");

        let mut conn = s.conn();
        assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
        let req = smuggling(head);
        let (a, b) = req.split_at(req.find("ength:").unwrap() + 3);
        conn.send(a.as_bytes());
        std::thread::sleep(Duration::from_millis(20));
        conn.send(b.as_bytes());
        let r = conn.read_response();
        assert_eq!((r.status, r.header("connection")), (400, Some("close")));
        assert!(conn.closed_by_server(), "the smuggled request was answered");
    }
}

/// Only a head whose first byte Cove can place is checked: one pipelined
/// in the same write as the request before it is not. hyper's framing
/// still holds: the body is framed by the chunks alone, answered, and the
/// connection closed, so the smuggled request is never answered either.
#[test]
fn a_pipelined_content_length_with_transfer_encoding_is_framed_by_the_chunks_then_closed() {
    let s = basic(&[]);
    for head in CL_TE {
        let mut req = build_request("GET", "/health", &[], None);
        req.extend_from_slice(smuggling(head).as_bytes());
        let got = exchange(s.port, &req);
        assert_eq!(got.matches("HTTP/1.1 ").count(), 2, "{got}");
        let second = got.rfind("HTTP/1.1 ").unwrap();
        let (first, second) = got.split_at(second);
        assert_eq!(status_of(first), 200, "{got}");
        assert!(
            !first.to_ascii_lowercase().contains("connection: close"),
            "{got}"
        );
        assert_one_closing(second, 200);
        assert!(second.ends_with(r#"{"len":5}"#), "{got}");
    }
}

/// A chunked request is served and the connection kept alive. Where the
/// request after a chunked body starts is hyper's to know, so that head is
/// not checked, nor any later one on the connection: CL + TE there gets
/// hyper's framing, then the close. A body with a `Content-Length` is
/// counted, and the head after it is checked.
#[test]
fn a_chunked_request_is_served_and_the_connection_kept_alive() {
    let s = basic(&[]);
    let mut conn = s.conn();
    conn.send(
        b"POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
          3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
    );
    let r = conn.read_response();
    assert_eq!((r.status, r.json()), (200, json!({"len": 5})));
    assert_eq!(r.header("connection"), None);
    assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
    conn.send(smuggling(CL_TE[1]).as_bytes());
    let r = conn.read_response();
    assert_eq!((r.status, r.json()), (200, json!({"len": 5})));
    assert_eq!(r.header("connection"), Some("close"));
    assert!(conn.closed_by_server(), "the smuggled request was answered");

    let mut conn = s.conn();
    assert_eq!(conn.request("POST", "/body", &[], Some(b"abc")).status, 200);
    conn.send(smuggling(CL_TE[0]).as_bytes());
    let r = conn.read_response();
    assert_eq!((r.status, r.header("connection")), (400, Some("close")));
    assert!(conn.closed_by_server(), "the smuggled request was answered");
}

#[test]
fn a_bad_chunk_size_is_400_and_the_connection_closes() {
    let s = basic(&[]);
    for size in ["zz", "-1", "1ffffffffffffffff", "3 3"] {
        let req = format!(
            "POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{size}\r\nabc\r\n0\r\n\r\n\
             GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
        );
        assert_one_closing(&exchange(s.port, req.as_bytes()), 400);
    }
}

#[test]
fn nul_or_cr_in_a_header_is_400_and_the_connection_closes() {
    let s = basic(&[]);
    for bad in [
        &b"X-A: a\0b"[..],
        b"X-A: a\rb",
        b"X-\0A: v",
        b"X-A\r: v",
        b"Host: x\0y",
    ] {
        let mut req = b"GET /health HTTP/1.1\r\nHost: x\r\n".to_vec();
        req.extend_from_slice(bad);
        req.extend_from_slice(b"\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        let got = exchange(s.port, &req);
        assert_one_closing(&got, 400);
    }
}

both!(a_hundred_pipelined_requests_are_answered_in_order);

fn a_hundred_pipelined_requests_are_answered_in_order(lang: Lang) {
    let s = Server::start(&example_file("hello", lang.ext()), &[]);
    let mut conn = s.conn();
    let mut batch = Vec::new();
    for i in 0..100 {
        if i % 2 == 0 {
            batch.extend(build_request("GET", &format!("/greet/n{i}"), &[], None));
        } else {
            batch.extend(build_request(
                "POST",
                "/echo",
                &[],
                Some(format!("b{i}").as_bytes()),
            ));
        }
    }
    conn.send(&batch);
    for i in 0..100 {
        let r = conn.read_response();
        assert_eq!(r.status, 200, "response {i}: {}", r.text());
        if i % 2 == 0 {
            assert!(r.json()["greeting"]
                .as_str()
                .unwrap()
                .contains(&format!("n{i}")));
        } else {
            assert_eq!(r.json()["body"], json!(format!("b{i}")));
        }
    }
    assert!(!conn.has_data(), "exactly 100 responses");
    assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
}

both!(a_body_over_max_body_is_413_before_it_is_sent);

/// The answer comes from the head (or the first chunk over the limit); the
/// client never sends the rest, and the connection is closed so nothing
/// is left half-read.
fn a_body_over_max_body_is_413_before_it_is_sent(lang: Lang) {
    let s = Server::start(&example_file("hello", lang.ext()), &["--max-body", "1k"]);
    let mut c = open(s.port);
    c.write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\nstart")
        .unwrap();
    let got = until_closed(&mut c);
    assert_one_closing(&got, 413);

    let mut c = open(s.port);
    let mut req =
        b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n".to_vec();
    req.resize(req.len() + 2048, b'c');
    c.write_all(&req).unwrap();
    assert_one_closing(&until_closed(&mut c), 413);
    // Within the limit, served.
    let r = s.request("POST", "/echo", &[], Some(&[b'a'; 1024]));
    assert_eq!(r.status, 200);
}

#[test]
fn a_head_that_stops_halfway_gets_408_and_the_connection_closes() {
    let s = basic(&["--header-timeout", "300"]);
    let got = exchange(s.port, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Half");
    assert_one_closing(&got, 408);
    assert!(got.contains("\r\ndate: "), "{got}");
    // A client that connects and sends nothing is let go without an answer.
    assert_eq!(exchange(s.port, b""), "");
    assert_eq!(s.get("/health").status, 200);
}

#[test]
fn a_head_that_trickles_in_is_cut_off_at_the_header_timeout() {
    let s = basic(&["--header-timeout", "300", "--idle-timeout", "60000"]);
    let mut c = open(s.port);
    // Two bytes every 20 ms: each is progress, the whole never arrives
    // within the timeout.
    let mut req = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ".to_vec();
    req.resize(req.len() + 10_000, b's');
    for pair in req.chunks(2) {
        if c.write_all(pair).is_err() {
            break;
        }
        let mut probe = [0u8; 1];
        c.set_nonblocking(true).unwrap();
        let answered = c.peek(&mut probe).is_ok();
        c.set_nonblocking(false).unwrap();
        if answered {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_one_closing(&until_closed(&mut c), 408);
}

#[test]
fn a_later_request_on_a_kept_alive_connection_gets_the_header_timeout_too() {
    let s = basic(&["--header-timeout", "300", "--idle-timeout", "60000"]);
    let mut conn = s.conn();
    assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
    conn.send(b"GET /health HTTP/1.1\r\nHo");
    let r = conn.read_response();
    assert_eq!((r.status, r.header("connection")), (408, Some("close")));
    assert!(conn.closed_by_server());
}

#[test]
fn an_idle_kept_alive_connection_is_closed_after_the_idle_timeout() {
    let s = basic(&["--idle-timeout", "300"]);
    let mut c = open(s.port);
    c.write_all(&build_request("GET", "/health", &[], None))
        .unwrap();
    // The response, then the close, and no 408 in between.
    let got = until_closed(&mut c);
    assert_eq!(status_of(&got), 200);
    assert_eq!(got.matches("HTTP/1.1 ").count(), 1, "{got}");
    assert!(
        !got.to_ascii_lowercase().contains("connection: close"),
        "{got}"
    );
}

/// Timeouts stop while the app has the request: a body that takes longer
/// than both to arrive is read whole (`--max-body` bounds it).
#[test]
fn a_request_the_app_is_handling_is_not_timed_out() {
    let s = basic(&["--header-timeout", "300", "--idle-timeout", "300"]);
    let mut conn = s.conn();
    conn.send(b"POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n");
    for byte in b"abcdef" {
        std::thread::sleep(Duration::from_millis(150));
        conn.send(&[*byte]);
    }
    let r = conn.read_response();
    assert_eq!((r.status, r.json()), (200, json!({"len": 6})));
}

/// The CI-sized version of issue 38's 2,000 slow connections (the stress
/// script in tools/ runs that one): 200 clients stuck halfway through a
/// head on one worker do not stop a normal client being answered, and each
/// of them gets its 408.
#[test]
fn two_hundred_slow_clients_do_not_stop_a_normal_one() {
    let s = basic(&["--workers", "1", "--header-timeout", "5000"]);
    let mut slow: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut c = open(s.port);
            c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .unwrap();
            c
        })
        .collect();
    let mut normal = Conn::open(s.port);
    for _ in 0..5 {
        assert_eq!(normal.request("GET", "/health", &[], None).status, 200);
    }
    for c in &mut slow {
        assert_one_closing(&until_closed(c), 408);
    }
    assert_eq!(normal.request("GET", "/health", &[], None).status, 200);
}

/// Out of file descriptors (`ulimit -n 48`), new connections wait in the
/// backlog: the server says so once a streak (not once per retry), stays up, and
/// serves again when connections close.
#[test]
fn out_of_file_descriptors_the_server_waits_says_so_once_and_serves_again() {
    let app = crate::util::fixture("basic");
    let s = Server::start_exe(
        std::path::Path::new("/bin/sh"),
        &[
            "-c",
            "ulimit -n 48 && exec \"$0\" \"$@\"",
            crate::util::bin(),
            app.to_str().unwrap(),
            "--workers",
            "1",
        ],
    )
    .expect("cove under ulimit -n 48");
    let held: Vec<TcpStream> = (0..100)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", s.port)).ok())
        .collect();
    assert!(held.len() > 48, "only {} connections", held.len());
    s.wait_for_log("accept failed");
    // Long enough for dozens of 20 ms retries.
    std::thread::sleep(Duration::from_millis(500));
    drop(held);
    let mut status = None;
    for _ in 0..100 {
        if let Ok(mut c) = TcpStream::connect(("127.0.0.1", s.port)) {
            c.set_read_timeout(Some(TIMEOUT)).unwrap();
            let _ = c.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut got = String::new();
            let _ = c.read_to_string(&mut got);
            if got.starts_with("HTTP/1.1 200") {
                status = Some(200);
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(status, Some(200), "{}", s.log());
    // One line a streak of failures (each retry 20 ms apart), not one a retry.
    let log = s.wait_for_log("accepting again after");
    let warned = log.matches("accept failed").count();
    assert!((1..=5).contains(&warned), "{log}");
}
