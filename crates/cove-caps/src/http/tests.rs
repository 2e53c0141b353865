use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;

use super::url::{allowed, parse, path};
use super::*;

fn hosts(list: &[&str]) -> Vec<String> {
    list.iter().map(|h| h.to_string()).collect()
}

fn get() -> &'static HttpFn {
    FUNCTIONS.iter().find(|f| f.js == "get").unwrap()
}

fn req(url: &str) -> Request {
    get().request(None, url.into(), None, Vec::new())
}

#[test]
fn parses_targets() {
    let t = parse("https://API.example.com/x?y").unwrap();
    assert_eq!(
        (t.https, t.host.as_str(), t.port),
        (true, "API.example.com", 443)
    );
    let t = parse("http://127.0.0.1:8080").unwrap();
    assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 8080));
    let t = parse("HTTP://[::1]:81/p").unwrap();
    assert_eq!((t.https, t.host.as_str(), t.port), (false, "::1", 81));
    assert_eq!(parse("http://[::1]").unwrap().port, 80);
    for bad in [
        "ftp://x.com/",
        "x.com/path",
        "http:///path",
        "http://x.com:0/",
        "http://x.com:99999/",
        "http://x.com:port/",
        "http://user:pw@x.com/",
        "http://a.com@evil.com/",
        "http://[::1/",
        "http://::1/",
    ] {
        assert!(parse(bad).is_err(), "{bad} should be refused");
    }
    assert!(parse("ftp://x.com/")
        .unwrap_err()
        .contains("only http and https"));
}

#[test]
fn paths_on_the_request_line() {
    assert_eq!(path("http://x.com"), "/");
    assert_eq!(path("http://x.com?q=1"), "?q=1");
    assert_eq!(path("http://x.com/a/b?c#frag"), "/a/b?c");
}

#[test]
fn hosts_match_exactly_ignoring_case_and_port() {
    let list = hosts(&["api.example.com", "[::1]", "127.0.0.1"]);
    assert!(allowed(&list, "API.Example.com"));
    assert!(allowed(&list, "::1"));
    assert!(!allowed(&list, "example.com"));
    assert!(!allowed(&list, "x.api.example.com"));
    let p = get().prepare(&list, req("http://127.0.0.1:9999/")).unwrap();
    assert_eq!(p.target().port, 9999);
}

#[test]
fn refusals_name_the_reason() {
    let list = hosts(&["api.example.com"]);
    let e = get().prepare(&[], req("http://x.com/")).unwrap_err();
    assert_eq!(e.message, "http not configured (no hosts in manifest)");
    assert_eq!(e.code(), "http.not_configured");
    let e = get().prepare(&list, req("http://evil.com/")).unwrap_err();
    assert_eq!(
        e.message,
        r#"http.get failed: host "evil.com" is not in the manifest's hosts list (hosts: "api.example.com")"#
    );
    assert_eq!(e.code(), "http.denied");
    let post = FUNCTIONS.iter().find(|f| f.js == "post").unwrap();
    let e = post
        .prepare(&list, post.request(None, "gopher://x".into(), None, vec![]))
        .unwrap_err();
    assert!(
        e.message
            .starts_with("http.POST failed: unsupported URL scheme"),
        "{e}"
    );
}

#[test]
fn header_limits_and_injection() {
    let list = hosts(&["x.com"]);
    let with = |headers: Vec<(String, String)>| {
        get().prepare(
            &list,
            get().request(None, "http://x.com/".into(), None, headers),
        )
    };
    let many = (0..=MAX_HEADERS)
        .map(|i| (format!("x-h{i}"), "v".to_string()))
        .collect();
    assert!(with(many)
        .unwrap_err()
        .message
        .contains("65 headers; the limit is 64"));
    let ok: Vec<_> = (0..MAX_HEADERS)
        .map(|i| (format!("x-h{i}"), "v".into()))
        .collect();
    assert!(with(ok).is_ok());
    let big = vec![("x-big".to_string(), "v".repeat(MAX_HEAD))];
    assert!(with(big).unwrap_err().message.contains("the limit is 4096"));
    for (n, v) in [("x-a", "1\r\nX-Evil: 1"), ("x-a\n", "1"), ("x-a", "a\0")] {
        let e = with(vec![(n.into(), v.into())]).unwrap_err();
        assert!(e.message.contains("contains CR, LF or NUL"), "{e}");
        assert_eq!(e.kind, Kind::Invalid);
    }
    assert!(with(vec![("bad name".into(), "v".into())]).is_err());
    let e = with(vec![("Content-Length".into(), "5".into())]).unwrap_err();
    assert!(e.message.contains("is set by Cove"), "{e}");
    let request = FUNCTIONS.iter().find(|f| f.js == "request").unwrap();
    let r = request.request(Some("get".into()), "http://x.com/".into(), None, vec![]);
    assert_eq!(r.method, "GET");
    let r = request.request(Some("GE T".into()), "http://x.com/".into(), None, vec![]);
    assert!(request.prepare(&list, r).is_err());
}

/// A one-shot server: answers `reply` to the first connection, returns
/// the request it read.
fn serve_once(reply: Vec<u8>) -> (u16, thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        // Head, then the body its Content-Length announces.
        loop {
            let n = s.read(&mut chunk).unwrap();
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length: ")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if buf.len() >= end + 4 + len || n == 0 {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        s.write_all(&reply).unwrap();
        String::from_utf8_lossy(&buf).into_owned()
    });
    (port, handle)
}

#[test]
fn sends_and_reads_a_response() {
    let reply = b"HTTP/1.1 201 Created\r\nX-One: a\r\nX-Dup: 1\r\nX-DUP: 2\r\nContent-Length: 5\r\n\r\nhello".to_vec();
    let (port, server) = serve_once(reply);
    let post = FUNCTIONS.iter().find(|f| f.js == "post").unwrap();
    let r = post.request(
        None,
        format!("http://127.0.0.1:{port}/p?q=1"),
        Some(b"data".to_vec()),
        vec![("X-Token".into(), "t".into())],
    );
    let res = post
        .prepare(&hosts(&["127.0.0.1"]), r)
        .unwrap()
        .send()
        .unwrap();
    assert_eq!(res.status, 201);
    assert_eq!(res.body, b"hello");
    assert_eq!(
        res.headers,
        vec![
            ("x-one".to_string(), "a".to_string()),
            ("x-dup".to_string(), "2".to_string()),
            ("content-length".to_string(), "5".to_string()),
        ]
    );
    let seen = server.join().unwrap();
    assert!(seen.starts_with("POST /p?q=1 HTTP/1.1\r\n"), "{seen}");
    let lower = seen.to_ascii_lowercase();
    assert!(lower.contains("\r\nx-token: t\r\n"), "{seen}");
    assert!(lower.contains("\r\nconnection: close\r\n"), "{seen}");
    assert!(lower.contains("\r\ncontent-length: 4\r\n"), "{seen}");
    assert!(!lower.contains("user-agent"), "{seen}");
    assert!(seen.ends_with("\r\n\r\ndata"), "{seen}");
}

#[test]
fn redirects_are_returned_not_followed() {
    let reply = b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:9/\r\nContent-Length: 0\r\n\r\n"
        .to_vec();
    let (port, server) = serve_once(reply);
    let res = get()
        .prepare(
            &hosts(&["127.0.0.1"]),
            req(&format!("http://127.0.0.1:{port}/")),
        )
        .unwrap()
        .send()
        .unwrap();
    assert_eq!(res.status, 302);
    assert_eq!(res.body, b"");
    server.join().unwrap();
}

#[test]
fn network_failures_say_why() {
    // Bind then drop: nothing listens on the port any more.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let list = hosts(&["127.0.0.1"]);
    let e = get()
        .prepare(&list, req(&format!("http://127.0.0.1:{port}/")))
        .unwrap()
        .send()
        .unwrap_err();
    assert_eq!(
        e.message,
        format!("http.get failed: connection refused (127.0.0.1:{port})")
    );
    assert_eq!(e.kind, Kind::Network);

    let mut reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n",
        MAX_RESPONSE + 1
    )
    .into_bytes();
    reply.resize(reply.len() + MAX_RESPONSE as usize + 1, b'x');
    let (port, server) = serve_once(reply);
    let e = get()
        .prepare(&list, req(&format!("http://127.0.0.1:{port}/")))
        .unwrap()
        .send()
        .unwrap_err();
    assert_eq!(e.kind, Kind::TooLarge, "{e}");
    assert!(e.message.contains("larger than 4194304 bytes"), "{e}");
    let _ = server.join();
}

#[test]
fn request_sends_a_body_with_any_method() {
    let (port, server) = serve_once(b"HTTP/1.1 204 No Content\r\n\r\n".to_vec());
    let request = FUNCTIONS.iter().find(|f| f.js == "request").unwrap();
    let r = request.request(
        Some("get".into()),
        format!("http://127.0.0.1:{port}/"),
        Some(b"q".to_vec()),
        vec![],
    );
    let res = request
        .prepare(&hosts(&["127.0.0.1"]), r)
        .unwrap()
        .send()
        .unwrap();
    assert_eq!((res.status, res.body.len()), (204, 0));
    let seen = server.join().unwrap();
    assert!(
        seen.starts_with("GET / HTTP/1.1\r\n") && seen.ends_with("\r\n\r\nq"),
        "{seen}"
    );
}
