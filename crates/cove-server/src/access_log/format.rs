//! The two line formats, written by hand into the worker's buffer (no
//! serde, no `fmt` on the common path: a line costs 950 to 1,450
//! instructions, see `tests.rs`'s `cost`).
//!
//! combined: Apache's and nginx's `combined` format, byte for byte
//!
//! ```text
//! %h - - [%d/%b/%Y:%H:%M:%S %z] "%r" %>s %b "%{Referer}i" "%{User-agent}i"
//! ```
//!
//! then Cove's fields, each ` key=value` with no spaces in the value
//! (`-` when absent, bytes that would break the token as `\xHH`):
//!
//! ```text
//!  rid=<request id> route=<pattern> dur_ms=<milliseconds, 3 decimals> w=<worker>
//! ```
//!
//! Parsers of the combined format (goaccess, awstats, `lnav`) stop after
//! the user agent's closing quote. A body of unknown length is `-`; a
//! known empty one `0` (nginx's `$body_bytes_sent`). Quotes, backslashes,
//! control bytes, DEL and non-ASCII bytes inside the quoted fields are
//! written `\xHH`, as nginx does.
//!
//! json: one object per line, always these keys in this order:
//! `time` (RFC 3339, UTC, milliseconds), `remote` (IP or null), `method`,
//! `path`, `query` (after the `?`, or null when there is none), `proto`,
//! `status`, `bytes` (null if unknown), `duration_ms` (a number with
//! microsecond precision), `route` (null if none matched), `worker`,
//! `request_id`, `referer`, `user_agent` (null when absent).

use cove_core::Room;

use super::clock::Clock;
use super::entry::Entry;
use super::request_id::RequestId;
use super::text::{decimal, escaped, json_str, millis, Escape, LastIp};
use super::Format;

/// What a worker's consecutive lines share, kept between them: the second
/// (most lines fall in the same one as the last) and the client address
/// (a keep-alive connection's requests, a benchmark's single client).
pub(crate) struct Memo {
    pub(crate) clock: Clock,
    pub(crate) ip: LastIp,
}

impl Memo {
    pub(crate) fn new(format: Format) -> Memo {
        Memo {
            clock: Clock::new(format),
            ip: LastIp::default(),
        }
    }
}

/// Room for a line's fixed parts; the strings' lengths are added to it.
const FIXED: usize = 160;

fn room_for(e: &Entry<'_>) -> usize {
    FIXED
        + e.method.len()
        + e.target.len()
        + e.route.map_or(0, str::len)
        + match &e.request_id {
            RequestId::Client(s) => s.len(),
            RequestId::Made(_) => 24,
        }
        + e.referer.map_or(0, str::len)
        + e.user_agent.map_or(0, str::len)
}

/// Append `e` as a combined line, ending in `\n`.
pub(crate) fn combined(out: &mut Vec<u8>, memo: &mut Memo, e: &Entry<'_>) {
    let mut r = Room::new(out, room_for(e));
    match e.remote {
        Some(addr) => memo.ip.write(&mut r, addr.ip()),
        None => r.byte(b'-'),
    }
    r.put(b" - - [");
    memo.clock.write(&mut r, e.time);
    r.put(b"] \"");
    r.put(e.method.as_bytes());
    r.byte(b' ');
    escaped(&mut r, e.target.as_bytes(), Escape::Quoted);
    r.byte(b' ');
    r.put(e.proto().as_bytes());
    r.put(b"\" ");
    decimal(&mut r, e.status.into());
    r.byte(b' ');
    match e.bytes {
        Some(n) => decimal(&mut r, n),
        None => r.byte(b'-'),
    }
    for header in [e.referer, e.user_agent] {
        r.put(b" \"");
        match header {
            Some(s) => escaped(&mut r, s.as_bytes(), Escape::Quoted),
            None => r.byte(b'-'),
        }
        r.byte(b'"');
    }
    r.put(b" rid=");
    e.request_id.write(&mut r);
    r.put(b" route=");
    token(&mut r, e.route);
    r.put(b" dur_ms=");
    millis(&mut r, e.duration);
    r.put(b" w=");
    decimal(&mut r, e.worker as u64);
    r.byte(b'\n');
}

#[inline(always)]
fn token(r: &mut Room<'_>, s: Option<&str>) {
    match s {
        Some(s) if !s.is_empty() => escaped(r, s.as_bytes(), Escape::Token),
        _ => r.byte(b'-'),
    }
}

/// Append `e` as a JSON line, ending in `\n`.
///
/// Each key goes out with the punctuation around it and the opening quote
/// of its value: one write where there were up to three (each write costs
/// a room check; this saved ~90 instructions a line, measured).
pub(crate) fn json(out: &mut Vec<u8>, memo: &mut Memo, e: &Entry<'_>) {
    let mut r = Room::new(out, room_for(e) + 64);
    let (path, query) = e.path_query();
    r.put(b"{\"time\":\"");
    memo.clock.write(&mut r, e.time);
    match e.remote {
        Some(addr) => {
            r.put(b"\",\"remote\":\"");
            memo.ip.write(&mut r, addr.ip());
            r.put(b"\",\"method\":\"");
        }
        None => r.put(b"\",\"remote\":null,\"method\":\""),
    }
    r.put(e.method.as_bytes());
    r.put(b"\",\"path\":\"");
    escaped(&mut r, path.as_bytes(), Escape::Json);
    match query {
        Some(q) => {
            r.put(b"\",\"query\":\"");
            escaped(&mut r, q.as_bytes(), Escape::Json);
            r.put(b"\",\"proto\":\"");
        }
        None => r.put(b"\",\"query\":null,\"proto\":\""),
    }
    r.put(e.proto().as_bytes());
    r.put(b"\",\"status\":");
    decimal(&mut r, e.status.into());
    match e.bytes {
        Some(n) => {
            r.put(b",\"bytes\":");
            decimal(&mut r, n);
            r.put(b",\"duration_ms\":");
        }
        None => r.put(b",\"bytes\":null,\"duration_ms\":"),
    }
    millis(&mut r, e.duration);
    match e.route {
        Some(route) => {
            r.put(b",\"route\":\"");
            escaped(&mut r, route.as_bytes(), Escape::Json);
            r.put(b"\",\"worker\":");
        }
        None => r.put(b",\"route\":null,\"worker\":"),
    }
    decimal(&mut r, e.worker as u64);
    r.put(b",\"request_id\":\"");
    e.request_id.write(&mut r);
    match e.referer {
        Some(referer) => {
            r.put(b"\",\"referer\":\"");
            escaped(&mut r, referer.as_bytes(), Escape::Json);
            r.put(b"\",\"user_agent\":");
        }
        None => r.put(b"\",\"referer\":null,\"user_agent\":"),
    }
    json_str(&mut r, e.user_agent);
    r.put(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::Version;
    use std::time::Duration;

    fn full() -> Entry<'static> {
        Entry {
            time: Duration::from_millis(971_186_136_042),
            remote: Some("127.0.0.1:51234".parse().unwrap()),
            method: "GET",
            target: "/apache_pb.gif?x=1&y=%20",
            version: Version::HTTP_11,
            status: 200,
            bytes: Some(2326),
            duration: Duration::from_micros(1_502),
            route: Some("/:file"),
            worker: 3,
            request_id: RequestId::Client("abc123"),
            referer: Some("http://www.example.com/start.html"),
            user_agent: Some("Mozilla/4.08 [en] (Win98; I ;Nav)"),
        }
    }

    fn empty() -> Entry<'static> {
        Entry {
            remote: None,
            version: Version::HTTP_2,
            target: "/",
            status: 404,
            bytes: None,
            route: None,
            referer: None,
            user_agent: None,
            ..full()
        }
    }

    fn line(format: Format, e: &Entry<'_>) -> String {
        let mut v = Vec::new();
        let mut memo = Memo::new(format);
        match format {
            Format::Combined => combined(&mut v, &mut memo, e),
            Format::Json => json(&mut v, &mut memo, e),
        }
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn combined_is_apaches_then_cove_fields() {
        assert_eq!(
            line(Format::Combined, &full()),
            "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /apache_pb.gif?x=1&y=%20 HTTP/1.1\" \
             200 2326 \"http://www.example.com/start.html\" \"Mozilla/4.08 [en] (Win98; I ;Nav)\" \
             rid=abc123 route=/:file dur_ms=1.502 w=3\n"
        );
    }

    #[test]
    fn combined_absent_fields() {
        assert_eq!(
            line(Format::Combined, &empty()),
            "- - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/2.0\" 404 - \"-\" \"-\" \
             rid=abc123 route=- dur_ms=1.502 w=3\n"
        );
        let zero = Entry {
            bytes: Some(0),
            ..full()
        };
        assert!(line(Format::Combined, &zero).contains("\" 200 0 \""));
    }

    #[test]
    fn combined_escapes_what_would_break_the_line() {
        let e = Entry {
            target: "/a\"b\\c\nd",
            user_agent: Some("evil\" \"x"),
            referer: Some("ré"),
            route: Some("/has space/\"q\""),
            remote: Some("[::1]:80".parse().unwrap()),
            ..full()
        };
        let l = line(Format::Combined, &e);
        assert_eq!(l.matches('\n').count(), 1);
        assert!(l.starts_with("::1 - - ["), "{l}");
        assert!(l.contains("\"GET /a\\x22b\\x5Cc\\x0Ad HTTP/1.1\""), "{l}");
        assert!(l.contains(" \"r\\xC3\\xA9\" \"evil\\x22 \\x22x\" "), "{l}");
        assert!(l.contains(" route=/has\\x20space/\\x22q\\x22 "), "{l}");
    }

    #[test]
    fn json_has_every_key() {
        let l = line(Format::Json, &full());
        assert_eq!(
            l,
            "{\"time\":\"2000-10-10T13:55:36.042Z\",\"remote\":\"127.0.0.1\",\"method\":\"GET\",\
             \"path\":\"/apache_pb.gif\",\"query\":\"x=1&y=%20\",\"proto\":\"HTTP/1.1\",\
             \"status\":200,\"bytes\":2326,\"duration_ms\":1.502,\"route\":\"/:file\",\
             \"worker\":3,\"request_id\":\"abc123\",\
             \"referer\":\"http://www.example.com/start.html\",\
             \"user_agent\":\"Mozilla/4.08 [en] (Win98; I ;Nav)\"}\n"
        );
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["duration_ms"].as_f64(), Some(1.502));
    }

    #[test]
    fn json_absent_fields_are_null() {
        let l = line(Format::Json, &empty());
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        for key in ["remote", "query", "bytes", "route", "referer", "user_agent"] {
            assert!(v[key].is_null(), "{key} in {l}");
        }
        assert_eq!(v["proto"], "HTTP/2.0");
        assert_eq!(v["path"], "/");
        let q = Entry {
            target: "/x?",
            ..full()
        };
        let v: serde_json::Value = serde_json::from_str(&line(Format::Json, &q)).unwrap();
        assert_eq!((&v["path"], &v["query"]), (&"/x".into(), &"".into()));
    }

    #[test]
    fn json_escapes_fully() {
        let e = Entry {
            target: "/a\"b\\c\nd?q=\u{1}",
            user_agent: Some("ünï\tcode"),
            route: Some("/\"r\""),
            ..full()
        };
        let l = line(Format::Json, &e);
        assert_eq!(l.matches('\n').count(), 1);
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!(v["path"], "/a\"b\\c\nd");
        assert_eq!(v["query"], "q=\u{1}");
        assert_eq!(v["user_agent"], "ünï\tcode");
        assert_eq!(v["route"], "/\"r\"");
    }
}
