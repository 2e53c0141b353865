//! WebSocket endpoints (`app.ws`) in both runtimes, through the real binary
//! and a real client (tungstenite): echo, middleware before the upgrade,
//! rooms across workers with their messages after their commits, and
//! failures that close with 1011 and name the app's line.

use std::net::TcpStream;
use std::time::Duration;

use tokio_tungstenite::tungstenite::client::client;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error, Message, WebSocket};

use crate::util::{both, fixture, line_of, Lang, Server};
use cove_testsvc::{Nginx, Redis};

both!(
    echoes_text_and_binary,
    middleware_runs_before_the_upgrade,
    rooms_span_workers_after_their_commits,
    failures_close_with_1011_and_name_the_line,
    a_connection_is_reached_only_from_its_own_handlers,
    rooms_span_processes_over_redis_behind_nginx,
    a_message_over_the_limit_closes_with_1009,
    wss_over_https,
);

fn app(lang: Lang) -> std::path::PathBuf {
    fixture("websocket").with_extension(lang.ext())
}

/// A WebSocket client on a blocking socket (10 s to read anything).
struct Client {
    ws: WebSocket<TcpStream>,
    headers: Vec<(String, String)>,
}

impl Client {
    fn connect(port: u16, path: &str) -> Result<Client, Error> {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let url = format!("ws://127.0.0.1:{port}{path}");
        let (ws, res) = client(url, stream).map_err(|e| match e {
            tokio_tungstenite::tungstenite::HandshakeError::Failure(e) => e,
            other => panic!("handshake: {other}"),
        })?;
        let headers = res
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        Ok(Client { ws, headers })
    }

    fn open(port: u16, path: &str) -> Client {
        Client::connect(port, path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn send(&mut self, text: &str) {
        self.ws.send(Message::text(text)).expect("send");
    }

    /// The next data message (pings are answered by tungstenite).
    fn next(&mut self) -> Message {
        loop {
            match self.ws.read().expect("read") {
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
                m => return m,
            }
        }
    }

    fn text(&mut self) -> String {
        match self.next() {
            Message::Text(t) => t.to_string(),
            other => panic!("expected text, got {other:?}"),
        }
    }

    /// The close frame the server sends next (data before it is skipped).
    fn closed(&mut self) -> (u16, String) {
        loop {
            match self.ws.read() {
                Ok(Message::Close(frame)) => {
                    let f = frame.expect("a close code");
                    return (u16::from(f.code), f.reason.to_string());
                }
                Ok(_) => continue,
                Err(e) => panic!("no close frame: {e}"),
            }
        }
    }

    fn close(&mut self, code: u16, reason: &str) {
        let frame = CloseFrame {
            code: CloseCode::from(code),
            reason: reason.into(),
        };
        self.ws.close(Some(frame)).expect("close");
        // Until the server's answer (or the end).
        while self.ws.read().is_ok() {}
    }
}

fn echoes_text_and_binary(lang: Lang) {
    let s = Server::start(&app(lang), &[]);
    let mut c = Client::open(s.port, "/echo");
    c.send("hello");
    assert_eq!(c.text(), "hello");
    c.send("caf\u{e9} \u{1f30a}");
    assert_eq!(c.text(), "caf\u{e9} \u{1f30a}");
    let bytes = vec![0u8, 1, 2, 255, 254];
    c.ws.send(Message::binary(bytes.clone())).unwrap();
    assert_eq!(c.next(), Message::binary(bytes));
    c.close(1000, "done");
    // A plain GET is told what the endpoint wants.
    let r = s.get("/echo");
    assert_eq!(r.status, 426, "{}", r.text());
}

fn middleware_runs_before_the_upgrade(lang: Lang) {
    let s = Server::start(&app(lang), &[]);
    match Client::connect(s.port, "/rooms/a") {
        Err(Error::Http(res)) => assert_eq!(res.status(), 401),
        Err(e) => panic!("expected the middleware's 401, got {e}"),
        Ok(_) => panic!("upgraded without a user"),
    }
    let mut c = Client::open(s.port, "/rooms/a?user=ann");
    assert!(
        c.headers.contains(&("x-user".into(), "ann".into())),
        "{:?}",
        c.headers
    );
    let hello: serde_json::Value = serde_json::from_str(&c.text()).unwrap();
    assert_eq!(hello["hello"], "ann");
    assert_eq!(hello["room"], "a");
    assert!(hello["id"].as_i64().unwrap() > 0, "{hello}");
}

fn rooms_span_workers_after_their_commits(lang: Lang) {
    let s = Server::start(&app(lang), &["--workers", "2"]);
    // Connections spread over both workers (the kernel picks).
    let mut clients: Vec<Client> = (0..6)
        .map(|i| {
            let mut c = Client::open(s.port, &format!("/rooms/r?user=u{i}"));
            c.text(); // hello
            c
        })
        .collect();
    let mut other = Client::open(s.port, "/rooms/elsewhere?user=x");
    other.text();
    for n in 1..=5 {
        clients[0].send(&format!("m{n}"));
        for c in clients.iter_mut() {
            assert_eq!(c.text(), format!("u0: m{n}"));
        }
        // The message came after the row it stands for was committed.
        let count = s.get("/said/r").json()["count"].as_i64().unwrap();
        assert!(
            count >= n,
            "message {n} arrived with {count} rows committed"
        );
    }
    assert_eq!(s.post("/announce/r", "news").status, 200);
    for c in clients.iter_mut() {
        assert_eq!(c.text(), "announce: news");
    }
    let mut gone = clients.pop().unwrap();
    gone.close(1000, "done");
    for c in clients.iter_mut() {
        assert_eq!(c.text(), "u5 left: 1000 done");
    }
    // The other room heard none of it.
    other.send("only here");
    assert_eq!(other.text(), "x: only here");
}

fn failures_close_with_1011_and_name_the_line(lang: Lang) {
    let file = app(lang);
    let name = format!("app.{}", lang.ext());
    let s = Server::start(&file, &["--max-instructions", "2000000"]);
    let (colon, _) = match lang {
        Lang::Lua => (":", ()),
        Lang::Js => (".", ()),
    };
    for (message, marker, logged) in [
        ("boom", Some("ws-boom"), "boom".to_string()),
        (
            "bad-close",
            Some("bad-close"),
            format!("ws{colon}close: a close code is 1000-1003, 1007-1014 or 3000-4999, got 1005"),
        ),
        ("loop", None, "instruction".to_string()),
    ] {
        let mut c = Client::open(s.port, "/faults");
        assert_eq!(c.text(), "hi");
        c.send("fine");
        assert_eq!(c.text(), "ok fine");
        c.send(message);
        assert_eq!(c.closed(), (1011, "internal error".into()), "{message}");
        let log = s.wait_for_log(&logged);
        assert!(log.contains("ws /faults message: "), "{log}");
        if let Some(marker) = marker {
            let line = line_of(&file, &format!("marker: {marker}"));
            assert!(log.contains(&format!("{name}:{line}")), "{message}: {log}");
        }
    }
    let mut c = Client::open(s.port, "/faults?x=1");
    c.text();
    for _ in 0..3 {
        c.send("req");
        assert_eq!(c.text(), "/faults 1");
    }
    if matches!(lang, Lang::Js) {
        c.send("this");
        assert_eq!(c.text(), "function");
    }
    // A refusal caught by the handler has its code, the same in both
    // runtimes, and the connection stays open.
    c.send("codes");
    assert_eq!(c.text(), "ws.argument ws.argument ws.invalid ws.argument");
    c.send("bye");
    assert_eq!(c.closed(), (4000, "bye now".into()));
    // The server keeps serving.
    assert_eq!(s.get("/said/r").status, 200);
}

fn a_connection_is_reached_only_from_its_own_handlers(lang: Lang) {
    let file = app(lang);
    let s = Server::start(&file, &["--workers", "1"]);
    let mut c = Client::open(s.port, "/faults");
    assert_eq!(c.text(), "hi");
    assert_eq!(s.get("/kept").status, 500);
    let log = s.wait_for_log("this connection's handler is not running");
    let line = line_of(&file, "marker: kept");
    assert!(log.contains(&format!("app.{}:{line}", lang.ext())), "{log}");
    c.send("still");
    assert_eq!(c.text(), "ok still");
}

/// Two processes sharing a Redis, behind nginx: a room's members on either
/// process hear each other.
fn rooms_span_processes_over_redis_behind_nginx(lang: Lang) {
    let Some(redis) = Redis::start() else { return };
    let url = redis.url();
    let extra = ["--workers", "1", "--kv", url.as_str()];
    let a = Server::start(&app(lang), &extra);
    let b = Server::start(&app(lang), &extra);
    let Some(lb) = Nginx::start(&[a.port, b.port]) else {
        return;
    };
    // One member on each process directly, and two through nginx (round
    // robin: one on each).
    let mut members = [
        Client::open(a.port, "/rooms/p?user=on-a"),
        Client::open(b.port, "/rooms/p?user=on-b"),
        Client::open(lb.port(), "/rooms/p?user=lb-1"),
        Client::open(lb.port(), "/rooms/p?user=lb-2"),
    ];
    for m in members.iter_mut() {
        m.text(); // hello
    }
    for (i, who) in ["on-a", "on-b", "lb-1", "lb-2"].iter().enumerate() {
        members[i].send("hi");
        for m in members.iter_mut() {
            assert_eq!(m.text(), format!("{who}: hi"));
        }
    }
}

fn a_message_over_the_limit_closes_with_1009(lang: Lang) {
    let s = Server::start(&app(lang), &["--ws-max-message", "1k"]);
    let mut c = Client::open(s.port, "/echo");
    c.send(&"x".repeat(1024));
    assert_eq!(c.text().len(), 1024);
    c.send(&"x".repeat(1025));
    assert_eq!(c.closed().0, 1009);
}

/// `wss://`: the same endpoint over HTTPS (HTTP/1.1 by ALPN), with a
/// client that trusts only the server's own self-signed certificate.
fn wss_over_https(lang: Lang) {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let names = vec!["localhost".to_string()];
    let pair = rcgen::generate_simple_self_signed(names).expect("certificate");
    let (cert, key) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
    std::fs::write(&cert, pair.cert.pem()).unwrap();
    std::fs::write(&key, pair.signing_key.serialize_pem()).unwrap();
    let s = Server::start(
        &app(lang),
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let mut roots = rustls::RootCertStore::empty();
    roots.add(pair.cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let name = "localhost".try_into().unwrap();
    let tls = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let stream = rustls::StreamOwned::new(tls, tcp);
    let url = format!("wss://localhost:{}/echo", s.port);
    let (mut ws, res) = client(url, stream).unwrap_or_else(|e| panic!("wss handshake: {e}"));
    assert_eq!(res.status(), 101);
    ws.send(Message::text("over tls")).unwrap();
    let got = loop {
        match ws.read().unwrap() {
            Message::Text(t) => break t.to_string(),
            _ => continue,
        }
    };
    assert_eq!(got, "over tls");
}
