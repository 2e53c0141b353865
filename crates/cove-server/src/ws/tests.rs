//! A real worker (its own thread, runtime and listener on 127.0.0.1:0)
//! serving WebSocket endpoints through a test handler and Rust apps, driven
//! by tokio-tungstenite as the client.
//!
//! `/echo` sends each message back; `/chat` subscribes to `room` on open
//! (then says `welcome`, so a client that has read it knows it is
//! subscribed) and publishes what it receives to `room` through the hub (a
//! broadcast channel, the worker's feed). Every event the apps see is
//! reported to the test.

use std::sync::{mpsc as std_mpsc, Arc};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{broadcast, watch};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{connect_async, MaybeTlsStream, WebSocketStream};

use cove_core::{Feed, Published, WsApp, WsCommand, WsConn, WsEvent, WsFuture};

use super::*;
use crate::config::{HttpLimits, Protocols};
use crate::convert::to_http;
use crate::Handler;
use hyper::body::Incoming;

type Client = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What the apps report: the connection's path and the event.
type Seen = (String, WsEvent);

struct Echo(std_mpsc::Sender<Seen>);

impl WsApp for Echo {
    fn event<'a>(&'a self, conn: &'a WsConn, event: WsEvent) -> WsFuture<'a> {
        let _ = self.0.send((conn.request.path.clone(), event.clone()));
        Box::pin(async move {
            match event {
                WsEvent::Message { data, binary } => vec![WsCommand::Send { data, binary }],
                _ => vec![],
            }
        })
    }
}

struct Chat(std_mpsc::Sender<Seen>);

impl WsApp for Chat {
    fn event<'a>(&'a self, conn: &'a WsConn, event: WsEvent) -> WsFuture<'a> {
        let _ = self.0.send((conn.request.path.clone(), event.clone()));
        Box::pin(async move {
            match event {
                WsEvent::Open => vec![
                    WsCommand::subscribe("room").unwrap(),
                    WsCommand::text("welcome"),
                ],
                WsEvent::Message { data, binary } => {
                    vec![WsCommand::Publish(Published::new("room", data, binary))]
                }
                WsEvent::Close { .. } => vec![],
            }
        })
    }
}

/// Upgrades `/echo` and `/chat`; anything else is a 404.
struct TestHandler {
    sockets: Sockets,
    live: Rc<Live>,
    feed: std::cell::RefCell<Option<Feed>>,
    echo: Rc<dyn WsApp>,
    chat: Rc<dyn WsApp>,
}

impl Handler for TestHandler {
    fn start(self: &Rc<Self>) {
        if let Some(feed) = self.feed.borrow_mut().take() {
            self.live.follow(feed);
        }
    }

    async fn handle(
        self: Rc<Self>,
        req: hyper::Request<Incoming>,
        _peer: std::net::SocketAddr,
    ) -> HttpResponse {
        let app = match req.uri().path() {
            "/echo" => self.echo.clone(),
            "/chat" => self.chat.clone(),
            _ => return to_http(cove_core::Response::plain(404, "Not Found")),
        };
        let (mut parts, _) = req.into_parts();
        let request = crate::convert::request_head(&mut parts);
        self.sockets.upgrade(&mut parts, request, app)
    }
}

struct Server {
    addr: std::net::SocketAddr,
    stop: watch::Sender<bool>,
    thread: Option<std::thread::JoinHandle<()>>,
    seen: std_mpsc::Receiver<Seen>,
    hub: broadcast::Sender<Arc<Published>>,
}

impl Server {
    fn start(limits: WsLimits) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stop_rx) = watch::channel(false);
        let (seen_tx, seen) = std_mpsc::channel();
        let (hub, feed) = broadcast::channel(4096);
        let to_hub = hub.clone();
        let publisher: cove_core::Publisher = Arc::new(move |p| {
            let _ = to_hub.send(Arc::new(p.numbered()));
        });
        let thread = std::thread::spawn(move || {
            let http = HttpLimits::default();
            let live = Rc::new(Live::new(http.idle_timeout));
            let handler = TestHandler {
                sockets: Sockets::new(limits, live.clone(), Some(publisher)),
                live,
                feed: std::cell::RefCell::new(Some(feed)),
                echo: Rc::new(Echo(seen_tx.clone())),
                chat: Rc::new(Chat(seen_tx)),
            };
            let drain = Duration::from_secs(10);
            crate::worker::run(
                handler,
                listener,
                stop_rx,
                http,
                Protocols::default(),
                drain,
            )
            .unwrap();
        });
        Server {
            addr,
            stop,
            thread: Some(thread),
            seen,
            hub,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("ws://{}{path}", self.addr)
    }

    async fn connect(&self, path: &str) -> Client {
        connect_async(self.url(path)).await.unwrap().0
    }

    /// The next event an app saw (waiting on the test's blocking pool).
    async fn next_seen(&self) -> Seen {
        // Borrowing across spawn_blocking needs 'static; poll instead.
        loop {
            match self.seen.try_recv() {
                Ok(seen) => return seen,
                Err(std_mpsc::TryRecvError::Empty) => {
                    tokio::time::sleep(Duration::from_millis(5)).await
                }
                Err(e) => panic!("{e}"),
            }
        }
    }

    /// Events until a Close, which is returned.
    async fn close_seen(&self) -> (u16, String) {
        loop {
            if let (_, WsEvent::Close { code, reason }) = self.next_seen().await {
                return (code, reason);
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The next message that is not a ping or pong.
async fn next_data(client: &mut Client) -> Message {
    loop {
        match client.next().await.unwrap().unwrap() {
            Message::Ping(_) | Message::Pong(_) => continue,
            m => return m,
        }
    }
}

fn close_code(m: Message) -> u16 {
    match m {
        Message::Close(Some(frame)) => frame.code.into(),
        other => panic!("expected a close frame, got {other:?}"),
    }
}

/// Send a raw request; the response head's status and headers, lower-cased.
async fn raw(addr: std::net::SocketAddr, head: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf).await.unwrap();
        assert!(
            n > 0,
            "closed before a response: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).to_lowercase()
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async { tokio::time::timeout(Duration::from_secs(60), f).await })
        .expect("the test hung")
}

#[test]
fn the_handshake_is_accepted_with_the_rfc_key() {
    let server = Server::start(WsLimits::default());
    run(async {
        let head = raw(
            server.addr,
            "GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        )
        .await;
        assert!(head.starts_with("http/1.1 101"), "{head}");
        assert!(
            head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
            "{head}"
        );
        assert!(head.contains("upgrade: websocket"), "{head}");
    });
}

#[test]
fn a_frame_sent_along_with_the_handshake_is_not_lost() {
    // hyper reads it with the request; the WebSocket reads it first.
    let server = Server::start(WsLimits::default());
    run(async {
        let mut s = TcpStream::connect(server.addr).await.unwrap();
        let mut out = b"GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\
            Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
            Sec-WebSocket-Version: 13\r\n\r\n"
            .to_vec();
        // A masked text frame, "hi", masked with 1 2 3 4.
        out.extend_from_slice(&[0x81, 0x82, 1, 2, 3, 4, b'h' ^ 1, b'i' ^ 2]);
        s.write_all(&out).await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        let echoed = loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                if got.len() >= end + 8 {
                    break got[end + 4..end + 8].to_vec();
                }
            }
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&got));
            got.extend_from_slice(&buf[..n]);
        };
        assert!(got.starts_with(b"HTTP/1.1 101"));
        assert_eq!(echoed, [0x81, 2, b'h', b'i']);
    });
}

#[test]
fn text_and_binary_are_echoed_and_the_app_sees_each_event_in_order() {
    let server = Server::start(WsLimits::default());
    run(async {
        let mut c = server.connect("/echo").await;
        c.send(Message::text("hello")).await.unwrap();
        assert_eq!(next_data(&mut c).await, Message::text("hello"));
        c.send(Message::binary(vec![0u8, 255, 1])).await.unwrap();
        assert_eq!(next_data(&mut c).await, Message::binary(vec![0u8, 255, 1]));
        c.close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "done".into(),
        }))
        .await
        .unwrap();
        // The server answers the close.
        assert_eq!(close_code(next_data(&mut c).await), 1000);
        let mut events = Vec::new();
        for _ in 0..4 {
            events.push(server.next_seen().await);
        }
        assert_eq!(
            events,
            vec![
                ("/echo".to_string(), WsEvent::Open),
                (
                    "/echo".into(),
                    WsEvent::Message {
                        data: Bytes::from_static(b"hello"),
                        binary: false
                    }
                ),
                (
                    "/echo".into(),
                    WsEvent::Message {
                        data: Bytes::from_static(&[0, 255, 1]),
                        binary: true
                    }
                ),
                (
                    "/echo".into(),
                    WsEvent::Close {
                        code: 1000,
                        reason: "done".into()
                    }
                ),
            ]
        );
    });
}

#[test]
fn a_message_over_the_limit_closes_with_1009() {
    let server = Server::start(WsLimits {
        max_message: 1024,
        ..WsLimits::default()
    });
    run(async {
        let mut c = server.connect("/echo").await;
        c.send(Message::text("small")).await.unwrap();
        assert_eq!(next_data(&mut c).await, Message::text("small"));
        c.send(Message::text("x".repeat(2048))).await.unwrap();
        assert_eq!(close_code(next_data(&mut c).await), 1009);
        assert_eq!(server.close_seen().await.0, 1009);
    });
}

#[test]
fn a_client_that_never_reads_is_closed_with_1008_once_its_queue_is_full() {
    let server = Server::start(WsLimits {
        queue: 4,
        // The client reads only once the server has given up on it.
        close_timeout: Duration::from_millis(500),
        ..WsLimits::default()
    });
    run(async {
        let mut c = server.connect("/chat").await;
        assert_eq!(next_data(&mut c).await, Message::text("welcome"));
        // 64 MiB in all: more than the socket buffers hold.
        let big = Bytes::from(vec![b'x'; 256 * 1024]);
        for _ in 0..256 {
            server
                .hub
                .send(Arc::new(
                    Published::new("room", big.clone(), true).numbered(),
                ))
                .unwrap();
        }
        assert_eq!(server.close_seen().await.0, 1008);
        // What got out before arrives, then the close frame.
        let mut got = 0;
        let code = loop {
            match next_data(&mut c).await {
                Message::Binary(b) => {
                    assert_eq!(b.len(), big.len());
                    got += 1;
                }
                other => break close_code(other),
            }
        };
        assert_eq!(code, 1008);
        assert!(got < 256, "all {got} messages arrived");
    });
}

#[test]
fn silence_brings_a_ping_and_a_missing_pong_ends_the_connection() {
    let server = Server::start(WsLimits {
        idle: Duration::from_millis(100),
        pong_timeout: Duration::from_millis(300),
        ..WsLimits::default()
    });
    run(async {
        // A client that reads answers pings (tungstenite does) and stays.
        let mut reading = server.connect("/echo").await;
        assert!(matches!(reading.next().await, Some(Ok(Message::Ping(_)))));
        assert!(matches!(reading.next().await, Some(Ok(Message::Ping(_)))));
        reading.send(Message::text("still here")).await.unwrap();
        assert_eq!(next_data(&mut reading).await, Message::text("still here"));

        // One that does not read never answers: dropped, without a close.
        let mut deaf = server.connect("/echo").await;
        assert_eq!(server.close_seen().await.0, 1006);
        assert!(matches!(deaf.next().await, Some(Ok(Message::Ping(_)))));
        assert!(!matches!(deaf.next().await, Some(Ok(_))));
    });
}

#[test]
fn two_subscribers_get_what_one_publishes() {
    let server = Server::start(WsLimits::default());
    run(async {
        let mut a = server.connect("/chat").await;
        let mut b = server.connect("/chat").await;
        assert_eq!(next_data(&mut a).await, Message::text("welcome"));
        assert_eq!(next_data(&mut b).await, Message::text("welcome"));
        a.send(Message::text("hi all")).await.unwrap();
        assert_eq!(next_data(&mut a).await, Message::text("hi all"));
        assert_eq!(next_data(&mut b).await, Message::text("hi all"));
        a.send(Message::binary(vec![1u8, 2])).await.unwrap();
        assert_eq!(next_data(&mut b).await, Message::binary(vec![1u8, 2]));
    });
}

#[test]
fn shutdown_closes_with_1001_and_the_drain_waits_for_it() {
    let mut server = Server::start(WsLimits::default());
    run(async {
        let mut c = server.connect("/echo").await;
        c.send(Message::text("x")).await.unwrap();
        assert_eq!(next_data(&mut c).await, Message::text("x"));
        server.stop.send(true).unwrap();
        assert_eq!(close_code(next_data(&mut c).await), 1001);
        // Reading on sends tungstenite's answer, and the server ends.
        assert!(c.next().await.is_none());
        assert_eq!(server.close_seen().await.0, 1001);
    });
    server.thread.take().unwrap().join().unwrap();
}

#[test]
fn bad_handshakes_are_refused_with_400_or_426() {
    let server = Server::start(WsLimits::default());
    run(async {
        let base = "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n";
        let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
        let plain = raw(server.addr, "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").await;
        assert!(plain.starts_with("http/1.1 426"), "{plain}");
        assert!(plain.contains("upgrade: websocket"), "{plain}");
        let old = format!("GET /echo HTTP/1.1\r\n{base}{key}Sec-WebSocket-Version: 8\r\n\r\n");
        let old = raw(server.addr, &old).await;
        assert!(old.starts_with("http/1.1 426"), "{old}");
        assert!(old.contains("sec-websocket-version: 13"), "{old}");
        let nokey = format!("GET /echo HTTP/1.1\r\n{base}Sec-WebSocket-Version: 13\r\n\r\n");
        assert!(raw(server.addr, &nokey).await.starts_with("http/1.1 400"));
        let post = format!(
            "POST /echo HTTP/1.1\r\n{base}{key}Sec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n"
        );
        assert!(raw(server.addr, &post).await.starts_with("http/1.1 400"));
        // The server still serves.
        let mut c = server.connect("/echo").await;
        c.send(Message::text("ok")).await.unwrap();
        assert_eq!(next_data(&mut c).await, Message::text("ok"));
    });
}

#[test]
fn past_the_worker_limit_an_upgrade_is_refused_with_503() {
    let server = Server::start(WsLimits {
        max_connections: 1,
        ..WsLimits::default()
    });
    run(async {
        let mut first = server.connect("/echo").await;
        match connect_async(server.url("/echo")).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(res)) => {
                assert_eq!(res.status(), 503)
            }
            other => panic!("expected a 503, got {other:?}"),
        }
        first.send(Message::text("still")).await.unwrap();
        assert_eq!(next_data(&mut first).await, Message::text("still"));
        // Once it is gone, a new one is let in.
        first.close(None).await.unwrap();
        server.close_seen().await;
        let mut again = server.connect("/echo").await;
        again.send(Message::text("in")).await.unwrap();
        assert_eq!(next_data(&mut again).await, Message::text("in"));
    });
}

/// A client's ping answered while the writer waits on a full socket: the
/// reader's write takes tokio's one write waker of the socket, and the
/// writer must still be woken (through tokio-tungstenite's waker proxy),
/// or what is published after never goes out.
#[test]
fn a_ping_answered_while_the_socket_is_full_leaves_the_writer_awake() {
    let server = Server::start(WsLimits::default());
    run(async {
        let mut c = server.connect("/chat").await;
        assert_eq!(next_data(&mut c).await, Message::text("welcome"));
        let big = Bytes::from(vec![b'x'; 512 * 1024]);
        let publish = |n: usize| {
            for _ in 0..n {
                let p = Published::new("room", big.clone(), true).numbered();
                server.hub.send(Arc::new(p)).unwrap();
            }
        };
        // 12 MiB unread: more than the two sockets' buffers hold.
        publish(24);
        tokio::time::sleep(Duration::from_millis(300)).await;
        c.send(Message::Ping(Bytes::from_static(b"are you there")))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        for _ in 0..24 {
            assert_eq!(next_data(&mut c).await, Message::Binary(big.clone()));
        }
        publish(3);
        for _ in 0..3 {
            let got = tokio::time::timeout(Duration::from_secs(10), next_data(&mut c)).await;
            assert_eq!(
                got.expect("published after the ping, never sent"),
                Message::Binary(big.clone())
            );
        }
    });
}
