//! examples/chat end to end, in both versions of the app: the real server
//! with two workers and a SQLite file, people signed in through the form
//! (session cookie, CSRF token), their rooms opened with a real WebSocket
//! client (tungstenite) and the online counter read with `curl -N`.
//! (`cove test examples/chat` covers the pages; in-process requests cannot
//! upgrade.) The browser version of this is browser::chat_in_chromium_*.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::{client, IntoClientRequest};
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error, HandshakeError, Message, WebSocket};

use crate::util::sse::Lines;
use crate::util::{both, example_file, Lang, Response, Server};
use cove_testsvc::Postgres;

both!(
    an_upgrade_needs_a_signed_in_user_this_site_and_a_valid_room,
    members_on_two_workers_hear_each_other,
    a_room_sends_its_last_50_messages_on_open,
    a_room_on_postgres_sends_its_last_50_messages,
    bad_messages_are_refused_to_the_sender_alone,
    the_online_counter_follows_people_in_rooms,
);

fn chat(lang: Lang) -> Server {
    Server::start(&example_file("chat", lang.ext()), &["--workers", "2"])
}

/// `name=value` of a response's Set-Cookie.
fn cookie_of(r: &Response) -> String {
    let set = r
        .header("set-cookie")
        .unwrap_or_else(|| panic!("no Set-Cookie: {}", r.text()));
    set.split(';').next().unwrap().to_string()
}

/// The page's hidden `_csrf` value.
fn csrf_token(page: &Response) -> String {
    let html = page.text();
    let start = html.find(r#"name="_csrf" value=""#).expect("a _csrf field") + 20;
    html[start..start + html[start..].find('"').unwrap()].to_string()
}

/// Sign in as `name` through the form (its visitor session and token) →
/// the session cookie, `name=value`.
fn sign_in(s: &Server, name: &str) -> String {
    let page = s.get("/login");
    let visitor = cookie_of(&page);
    let body = format!("_csrf={}&name={name}", csrf_token(&page));
    let headers = [
        ("Cookie", visitor.as_str()),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    let r = s.request("POST", "/login", &headers, Some(body.as_bytes()));
    assert_eq!(r.status, 302, "{}", r.text());
    cookie_of(&r)
}

/// A room member: a WebSocket on a blocking socket (10 s to read anything).
struct Member {
    ws: WebSocket<TcpStream>,
}

impl Member {
    fn connect(port: u16, path: &str, headers: &[(&str, &str)]) -> Result<Member, Error> {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut request = format!("ws://127.0.0.1:{port}{path}")
            .into_client_request()
            .unwrap();
        for (name, value) in headers {
            let name = HeaderName::from_bytes(name.as_bytes()).unwrap();
            let value = HeaderValue::from_str(value).unwrap();
            request.headers_mut().insert(name, value);
        }
        match client(request, stream) {
            Ok((ws, _)) => Ok(Member { ws }),
            Err(HandshakeError::Failure(e)) => Err(e),
            Err(e) => panic!("handshake: {e}"),
        }
    }

    /// Into `room` with the session `cookie`; its history read.
    fn join(s: &Server, cookie: &str, room: &str) -> (Member, Value) {
        let path = format!("/ws/rooms/{room}");
        let mut m = Member::connect(s.port, &path, &[("Cookie", cookie)])
            .unwrap_or_else(|e| panic!("{path}: {e}\n{}", s.log()));
        let history = m.next();
        assert_eq!(history["type"], "history", "{history}");
        assert_eq!(history["room"], room);
        (m, history)
    }

    fn say(&mut self, text: &str) {
        self.ws.send(Message::text(text)).expect("send");
    }

    /// The next message, as JSON (pings are answered by tungstenite).
    fn next(&mut self) -> Value {
        loop {
            match self.ws.read().expect("read") {
                Message::Text(t) => return serde_json::from_str(&t).expect("JSON"),
                Message::Ping(_) | Message::Pong(_) => continue,
                other => panic!("expected text, got {other:?}"),
            }
        }
    }

    fn leave(mut self) {
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "bye".into(),
        };
        self.ws.close(Some(frame)).expect("close");
        while self.ws.read().is_ok() {}
    }
}

/// The status and JSON body of a refused upgrade.
fn refused(s: &Server, path: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    match Member::connect(s.port, path, headers) {
        Err(Error::Http(res)) => {
            let body = res.body().as_deref().unwrap_or_default();
            let json = serde_json::from_slice(body).unwrap_or(Value::Null);
            (res.status().as_u16(), json)
        }
        Err(e) => panic!("{path}: expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("{path}: upgraded"),
    }
}

/// A chat message as every member receives it; `at` checked and dropped.
fn said(mut m: Value) -> Value {
    let at = m["at"].as_i64().unwrap_or_else(|| panic!("no at: {m}"));
    assert!(at > 1_700_000_000, "{m}");
    m.as_object_mut().unwrap().remove("at");
    m
}

fn an_upgrade_needs_a_signed_in_user_this_site_and_a_valid_room(lang: Lang) {
    let s = chat(lang);
    let sign_in_first = json!({"error": "Sign in first."});
    assert_eq!(
        refused(&s, "/ws/rooms/lobby", &[]),
        (401, sign_in_first.clone())
    );
    // A visitor's session (from the sign-in page) is no sign-in.
    let visitor = cookie_of(&s.get("/login"));
    assert_eq!(
        refused(&s, "/ws/rooms/lobby", &[("Cookie", &visitor)]),
        (401, sign_in_first.clone())
    );
    let cookie = sign_in(&s, "Ann");
    // A page of another site cannot use Ann's cookie.
    let (status, body) = refused(
        &s,
        "/ws/rooms/lobby",
        &[("Cookie", &cookie), ("Origin", "http://evil.example")],
    );
    assert_eq!(status, 403, "{body}");
    for path in [
        "/ws/rooms/Lobby",
        "/ws/rooms/-x",
        &format!("/ws/rooms/{}", "a".repeat(33)),
    ] {
        let (status, body) = refused(&s, path, &[("Cookie", &cookie)]);
        assert_eq!(status, 400, "{path}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .starts_with("Room names are 1 to 32 lowercase letters"),
            "{body}"
        );
    }
    // This site's own page, and a client that sends no Origin, get in.
    let own = format!("http://127.0.0.1:{}", s.port);
    let headers = [("Cookie", cookie.as_str()), ("Origin", own.as_str())];
    let mut m = Member::connect(s.port, "/ws/rooms/lobby", &headers).expect("upgrade");
    assert_eq!(
        m.next(),
        json!({"type": "history", "room": "lobby", "messages": []})
    );
    let (mut other, _) = Member::join(&s, &cookie, &format!("r{}", "2".repeat(31)));
    assert_eq!(said(other.next()), json!({"type": "join", "user": "Ann"}));

    // A plain GET is told to upgrade.
    let r = s.request("GET", "/ws/rooms/lobby", &[("Cookie", &cookie)], None);
    assert_eq!(r.status, 426);

    // Signed out, the cookie opens nothing.
    let page = s.request("GET", "/", &[("Cookie", &cookie)], None);
    let body = format!("_csrf={}", csrf_token(&page));
    let headers = [
        ("Cookie", cookie.as_str()),
        ("Content-Type", "application/x-www-form-urlencoded"),
    ];
    let r = s.request("POST", "/logout", &headers, Some(body.as_bytes()));
    assert_eq!(r.status, 302);
    assert_eq!(
        refused(&s, "/ws/rooms/lobby", &[("Cookie", &cookie)]),
        (401, sign_in_first)
    );
}

fn members_on_two_workers_hear_each_other(lang: Lang) {
    let s = chat(lang);
    // Three people with two tabs each: six connections, which the kernel
    // spreads over both workers (all on one: 1 in 32).
    let names = ["Ann", "Bob", "Cy"];
    let cookies: Vec<String> = names.iter().map(|n| sign_in(&s, n)).collect();
    let mut members: Vec<Member> = Vec::new();
    for (i, cookie) in cookies.iter().chain(cookies.iter()).enumerate() {
        let (m, _) = Member::join(&s, cookie, "lobby");
        members.push(m);
        // Everybody in the room (the newcomer too) hears of the join.
        for m in members.iter_mut() {
            assert_eq!(
                said(m.next()),
                json!({"type": "join", "user": names[i % 3]})
            );
        }
    }
    // Each person says something from one of their tabs; all six hear it,
    // in order, as {user, text, at}.
    for (i, name) in names.iter().enumerate() {
        let text = format!("hello from {name} \u{1f44b}");
        members[i + 3].say(&format!("  {text}\n"));
        for m in members.iter_mut() {
            let msg = said(m.next());
            assert_eq!(msg, json!({"type": "message", "user": name, "text": text}));
        }
    }
    // The messages were stored before they were sent.
    let rows = db_rows(&s, "SELECT name, text FROM messages ORDER BY id");
    assert_eq!(rows.len(), 3, "{rows:?}");
    // Another room hears none of it; a leaver is announced.
    let (mut elsewhere, _) = Member::join(&s, &cookies[0], "elsewhere");
    members.pop().unwrap().leave();
    for m in members.iter_mut() {
        assert_eq!(said(m.next()), json!({"type": "leave", "user": "Cy"}));
    }
    assert_eq!(
        said(elsewhere.next()),
        json!({"type": "join", "user": "Ann"})
    );
    elsewhere.say("only here");
    assert_eq!(
        said(elsewhere.next()),
        json!({"type": "message", "user": "Ann", "text": "only here"})
    );
    // The room list counts what each room kept.
    let home = s.request("GET", "/", &[("Cookie", &cookies[1])], None);
    let html = home.text();
    assert!(
        html.contains(
            r##"<a href="/rooms/lobby">#lobby</a> <span class="muted">3 messages</span>"##
        ),
        "{html}"
    );
    assert!(
        html.contains(
            r##"<a href="/rooms/elsewhere">#elsewhere</a> <span class="muted">1 message</span>"##
        ),
        "{html}"
    );
}

/// The rows of `sql` on the server's database, each as strings.
fn db_rows(s: &Server, sql: &str) -> Vec<Vec<String>> {
    let db = rusqlite::Connection::open(s.db_path()).expect("open the app's database");
    let mut stmt = db.prepare(sql).expect("prepare");
    let n = stmt.column_count();
    stmt.query_map([], |row| {
        (0..n)
            .map(|i| {
                row.get::<_, rusqlite::types::Value>(i)
                    .map(|v| format!("{v:?}"))
            })
            .collect()
    })
    .expect("query")
    .map(|r| r.expect("row"))
    .collect()
}

/// Ann says 55 things in "busy" and one in "quiet"; Bob, arriving in each,
/// is sent the last 50 and the one, oldest first, as they were sent.
fn the_last_50_on_open(s: &Server) {
    let ann = sign_in(s, "Ann");
    let (mut m, history) = Member::join(s, &ann, "busy");
    assert_eq!(history["messages"], json!([]));
    m.next(); // her join
    for i in 1..=55 {
        m.say(&format!("message {i}"));
        assert_eq!(said(m.next())["text"], format!("message {i}"));
    }
    let (mut quiet, _) = Member::join(s, &ann, "quiet");
    quiet.say("just one");
    quiet.next();
    quiet.next();

    let bob = sign_in(s, "Bob");
    let (_, history) = Member::join(s, &bob, "busy");
    let messages = history["messages"].as_array().expect("a list");
    assert_eq!(messages.len(), 50);
    for (i, msg) in messages.iter().enumerate() {
        let text = format!("message {}", i + 6);
        assert_eq!(said(msg.clone()), json!({"user": "Ann", "text": text}));
    }
    let (_, history) = Member::join(s, &bob, "quiet");
    assert_eq!(
        said(history["messages"][0].clone()),
        json!({"user": "Ann", "text": "just one"})
    );
    // The room list counts what each room kept.
    let home = s.request("GET", "/", &[("Cookie", &bob)], None).text();
    for (room, kept) in [("busy", "50 messages"), ("quiet", "1 message")] {
        let item =
            format!(r##"<a href="/rooms/{room}">#{room}</a> <span class="muted">{kept}</span>"##);
        assert!(home.contains(&item), "{item} in:\n{home}");
    }
}

fn a_room_sends_its_last_50_messages_on_open(lang: Lang) {
    let s = chat(lang);
    the_last_50_on_open(&s);
    // The database keeps 50 a room, no more.
    let kept = db_rows(
        &s,
        "SELECT room, count(*) FROM messages GROUP BY room ORDER BY room",
    );
    assert_eq!(
        kept,
        [
            ["Text(\"busy\")", "Integer(50)"],
            ["Text(\"quiet\")", "Integer(1)"]
        ]
    );
}

/// The same on PostgreSQL (its own migration, the same queries). Skipped
/// where PostgreSQL is not installed, unless COVE_REQUIRE_SERVICES is set.
fn a_room_on_postgres_sends_its_last_50_messages(lang: Lang) {
    let Some(pg) = Postgres::start() else { return };
    let s = Server::start_on(
        &example_file("chat", lang.ext()),
        &pg.url(),
        &["--workers", "2"],
    );
    the_last_50_on_open(&s);
}

fn bad_messages_are_refused_to_the_sender_alone(lang: Lang) {
    let s = chat(lang);
    let (mut ann, _) = Member::join(&s, &sign_in(&s, "Ann"), "lobby");
    ann.next();
    let (mut bob, _) = Member::join(&s, &sign_in(&s, "Bob"), "lobby");
    ann.next();
    bob.next();
    let error = |text: &str| json!({"type": "error", "error": text});
    ann.say(" \t\n ");
    assert_eq!(ann.next(), error("A message cannot be empty."));
    // 500 characters, not bytes: 500 two-byte letters pass, 501 do not.
    ann.say(&"é".repeat(501));
    assert_eq!(
        ann.next(),
        error("A message is at most 500 characters (this one has 501).")
    );
    ann.ws.send(Message::binary(vec![1u8, 2, 3])).unwrap();
    assert_eq!(ann.next(), error("Messages are text, not binary."));
    ann.say(&"é".repeat(500));
    // Bob heard only the good one; the connection is still open.
    for m in [&mut ann, &mut bob] {
        let msg = said(m.next());
        assert_eq!(msg["type"], "message");
        assert_eq!(msg["text"].as_str().unwrap().chars().count(), 500);
    }
    assert_eq!(
        db_rows(&s, "SELECT count(*) FROM messages"),
        [["Integer(1)"]]
    );
}

/// An event stream read by curl, one `data:` line at a time.
struct Stream {
    lines: Lines,
}

impl Stream {
    fn open(port: u16, path: &str) -> Stream {
        Stream {
            lines: Lines::open(port, path),
        }
    }

    /// The data of the next event, which must be named `name`.
    fn next(&mut self, name: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut event = None;
        loop {
            let line = self
                .lines
                .next_by(deadline)
                .unwrap_or_else(|| panic!("no {name} event within 10 s"));
            if let Some(n) = line.strip_prefix("event: ") {
                event = Some(n.to_string());
            } else if let Some(data) = line.strip_prefix("data: ") {
                assert_eq!(event.as_deref(), Some(name), "{data}");
                return data.to_string();
            }
        }
    }
}

fn the_online_counter_follows_people_in_rooms(lang: Lang) {
    let s = chat(lang);
    let mut online = Stream::open(s.port, "/events/online");
    assert_eq!(online.next("online"), r#"{"online":0}"#);
    let (ann, bob) = (sign_in(&s, "Ann"), sign_in(&s, "Bob"));
    // Each connection on whichever worker: the count is the server's.
    let (ann1, _) = Member::join(&s, &ann, "lobby");
    assert_eq!(online.next("online"), r#"{"online":1}"#);
    // A second room of the same person changes nothing...
    let (ann2, _) = Member::join(&s, &ann, "other");
    let (bob1, _) = Member::join(&s, &bob, "lobby");
    // ...so the next change is Bob's.
    assert_eq!(online.next("online"), r#"{"online":2}"#);
    // A stream opened now starts with the count.
    let mut late = Stream::open(s.port, "/events/online");
    assert_eq!(late.next("online"), r#"{"online":2}"#);
    bob1.leave();
    assert_eq!(online.next("online"), r#"{"online":1}"#);
    ann1.leave();
    // A connection that breaks without a close frame counts as gone too.
    drop(ann2);
    assert_eq!(online.next("online"), r#"{"online":0}"#);
    assert_eq!(late.next("online"), r#"{"online":1}"#);
    assert_eq!(late.next("online"), r#"{"online":0}"#);
}
