//! Server-Sent Events and `app.publish`, in both runtimes, through the real
//! binary: a stream carries what any worker (and, with Redis, any process)
//! publishes, once the publishing request's writes are committed, and
//! nothing a failed handler published.

use std::time::{Duration, Instant};

use crate::util::sse::Lines;
use crate::util::{both, fixture, line_of, Lang, Server};
use cove_testsvc::{Nginx, Redis};

both!(
    a_stream_carries_what_any_worker_publishes,
    a_failed_handler_publishes_nothing,
    a_message_follows_its_commit,
    publish_and_event_errors_name_the_line,
    streams_span_processes_over_redis_behind_nginx,
);

fn app(lang: Lang) -> std::path::PathBuf {
    fixture("live").with_extension(lang.ext())
}

/// An event stream read by curl, one line at a time.
struct Stream {
    lines: Lines,
    seen: Vec<String>,
}

impl Stream {
    fn open(port: u16, path: &str) -> Stream {
        let mut s = Stream {
            lines: Lines::open(port, path),
            seen: Vec::new(),
        };
        // The first event is sent at once: the stream is open (and
        // subscribed) once it has arrived.
        s.wait_for("data: {\"hello\":\"you\"}");
        s
    }

    /// Every line so far once one equals `line` (it may have come already).
    fn wait_for_seen(&mut self, line: &str) -> Vec<String> {
        if !self.seen.iter().any(|l| l == line) {
            self.wait_for(line);
        }
        self.seen.clone()
    }

    /// Lines until one equals `line`; a panic with what came after 10 s.
    fn wait_for(&mut self, line: &str) -> Vec<String> {
        let start = self.seen.len();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.seen[start..].iter().any(|l| l == line) {
            match self.lines.next_by(deadline) {
                Some(l) => self.seen.push(l),
                None => panic!("no {line:?} in the stream; it carried {:?}", self.seen),
            }
        }
        self.seen[start..].to_vec()
    }
}

fn a_stream_carries_what_any_worker_publishes(lang: Lang) {
    let s = Server::start(&app(lang), &["--workers", "2"]);
    let mut stream = Stream::open(s.port, "/events");
    assert!(stream.seen.contains(&"event: welcome".to_string()));
    assert!(stream.seen.contains(&"id: 1".to_string()));
    // New connections each: the kernel spreads them over both workers.
    for i in 0..10 {
        assert_eq!(s.post("/say", &format!("m{i}\nsecond line")).status, 200);
    }
    let lines = stream.wait_for("data: m9");
    let data: Vec<&String> = lines.iter().filter(|l| l.starts_with("data: m")).collect();
    let expected: Vec<String> = (0..10).map(|i| format!("data: m{i}")).collect();
    assert_eq!(data, expected.iter().collect::<Vec<_>>(), "{lines:?}");
    assert!(lines.contains(&"event: chat".to_string()));
    assert!(lines.contains(&"data: second line".to_string()));
}

fn a_failed_handler_publishes_nothing(lang: Lang) {
    let s = Server::start(&app(lang), &[]);
    let mut stream = Stream::open(s.port, "/events");
    assert_eq!(s.post("/fail", "x").status, 500);
    assert_eq!(s.post("/say", "after").status, 200);
    let lines = stream.wait_for("data: after");
    assert!(!lines.iter().any(|l| l.contains("never")), "{lines:?}");
}

fn a_message_follows_its_commit(lang: Lang) {
    let s = Server::start(&app(lang), &["--workers", "2"]);
    let mut stream = Stream::open(s.port, "/events?topic=notes");
    for n in 1..=20 {
        // Sent without waiting for the answer: the event may arrive first,
        // and must not come before the row is there to read.
        let port = s.port;
        let post = std::thread::spawn(move || {
            crate::util::Conn::open(port).request(
                "POST",
                "/add",
                &[],
                Some(n.to_string().as_bytes()),
            )
        });
        stream.wait_for(&format!("data: {{\"n\":{n}}}"));
        let count = s.get("/count").json()["count"].as_i64().unwrap();
        assert!(count >= n, "event {n} arrived with {count} rows committed");
        assert_eq!(post.join().unwrap().status, 200);
    }
}

fn publish_and_event_errors_name_the_line(lang: Lang) {
    let file = app(lang);
    let s = Server::start(&file, &[]);
    let name = format!("app.{}", lang.ext());
    let (dot, colon) = match lang {
        Lang::Lua => (":", ":"),
        Lang::Js => (".", "."),
    };
    for (path, marker, message) in [
        (
            "/bad-topic",
            "bad-topic",
            "app.publish: the topic must be a string, got number".to_string(),
        ),
        (
            "/bad-event",
            "bad-event",
            format!("res{colon}event: an event's name cannot contain a line break"),
        ),
        (
            "/bad-subscribe",
            "bad-subscribe",
            format!("res{dot}subscribe: a topic is a non-empty string of at most 256 bytes"),
        ),
    ] {
        assert_eq!(s.get(path).status, 500, "{path}");
        let line = line_of(&file, &format!("marker: {marker}"));
        let log = s.wait_for_log(&message);
        assert!(log.contains(&format!("{name}:{line}")), "{path}: {log}");
    }
    // The server keeps serving.
    assert_eq!(s.post("/say", "still").status, 200);
}

/// Two processes sharing a Redis, behind nginx: a stream held by one
/// process carries what both publish.
fn streams_span_processes_over_redis_behind_nginx(lang: Lang) {
    let Some(redis) = Redis::start() else { return };
    let url = redis.url();
    let extra = ["--workers", "1", "--kv", url.as_str()];
    let a = Server::start(&app(lang), &extra);
    let b = Server::start(&app(lang), &extra);
    let Some(lb) = Nginx::start(&[a.port, b.port]) else {
        return;
    };
    let mut stream = Stream::open(lb.port(), "/events");
    // Round robin: the posts alternate between the processes.
    for i in 0..6 {
        let r = crate::util::Conn::open(lb.port()).request(
            "POST",
            "/say",
            &[],
            Some(format!("p{i}").as_bytes()),
        );
        assert_eq!(r.status, 200);
    }
    // And one to each process directly: the one not holding the stream
    // reaches it only through Redis.
    assert_eq!(a.post("/say", "direct-a").status, 200);
    assert_eq!(b.post("/say", "direct-b").status, 200);
    let mut lines = stream.wait_for("data: direct-a");
    lines.extend(stream.wait_for_seen("data: direct-b"));
    for i in 0..6 {
        assert!(lines.contains(&format!("data: p{i}")), "{lines:?}");
    }
}

/// `cove test`: a stream route's reply is the events it starts with.
#[test]
fn cove_test_sees_a_streams_first_events() {
    let dir = fixture("live");
    let out = crate::util::run(&["test", dir.parent().unwrap().to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(
        out.stdout.matches("2/2 tests passed").count(),
        2,
        "{}",
        out.stdout
    );
}

/// `app.publish` at load time (no request to send it with) stops the start
/// with the app's line and what to do, in both runtimes.
#[test]
fn publishing_at_load_time_is_refused_with_its_line() {
    for (file, source) in [
        (
            "app.lua",
            "app.get(\"/\", function(req, res) end)\napp.publish(\"t\", \"x\")\n",
        ),
        (
            "app.js",
            "import { app } from \"hull:app\";\napp.publish(\"t\", \"x\");\n",
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(file);
        std::fs::write(&path, source).unwrap();
        let db = tmp.path().join("data.db");
        let r = crate::util::run(&[
            "-p",
            "0",
            "-d",
            db.to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        let expected = format!("{file}:2: {}", cove_core::PUBLISH_OUTSIDE_REQUEST);
        assert!(
            r.stderr.contains(&expected),
            "{expected:?} in:\n{}",
            r.stderr
        );
    }
}
