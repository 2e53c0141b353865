//! `cove request METHOD PATH`: one HTTP request to the local dev server, the
//! response as one JSON line (Hull's `hull agent request`, §1.4), for agents
//! that would otherwise have to parse curl's output. `cove mcp`'s `request`
//! tool sends through [`send`] too, so middleware, body limits and the
//! sandbox apply as they do to a browser.
//!
//! Plain HTTP/1.1 over a std `TcpStream`: one request per connection
//! (`Connection: close`), so the response ends at EOF unless it is chunked.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use serde_json::{json, Map, Value as Json};

use crate::cli::RequestArgs;

/// Connect, read and write timeouts: a stuck handler fails the call rather
/// than hanging an agent.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest response read, head and body together.
const MAX_RESPONSE: usize = 1 << 20;

/// How the response is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Header names lowercased, the body parsed (see [`body_json`]).
    Cove,
    /// Hull's `agent request`: header names as the server sent them, the
    /// body as text.
    Hull,
}

pub fn run(args: &RequestArgs, shape: Shape) -> Result<i32> {
    let port = match args.port {
        Some(p) => p,
        None => crate::agent::state::listening_port(&crate::agent::app_dir(args.app.as_deref()))
            .unwrap_or(crate::agent::state::DEFAULT_PORT),
    };
    let headers = args
        .header
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>>>();
    let result = headers.and_then(|headers| {
        let body = args.data.as_deref().map(str::as_bytes);
        exchange(port, &args.method, &args.path, &headers, body, shape)
    });
    Ok(crate::inspect::emit(result))
}

/// `Name: value` → (`Name`, `value`).
fn parse_header(h: &str) -> Result<(String, String)> {
    match h.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => bail!("-H {h:?}: a header is `Name: value`, e.g. -H 'Accept: application/json'"),
    }
}

/// Send one request to 127.0.0.1:`port`; the response as
/// `{"status","elapsed_ms","headers","body"}` (see [`body_json`]).
pub fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
) -> Result<Json> {
    exchange(port, method, path, headers, body, Shape::Cove)
}

fn exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    shape: Shape,
) -> Result<Json> {
    let method = method.to_ascii_uppercase();
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        bail!("{method:?} is not an HTTP method (e.g. GET, POST)");
    }
    if !path.starts_with('/') || path.bytes().any(|b| b.is_ascii_whitespace()) {
        bail!("{path:?}: the path must start with / and contain no spaces (encode them as %20)");
    }
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let started = Instant::now();
    let mut stream = TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| {
        let hint = "is `cove dev` running? (start it with `cove dev`)";
        match e.kind() {
            io::ErrorKind::ConnectionRefused => anyhow!("cannot connect to {addr} — {hint}"),
            _ => anyhow!("cannot connect to {addr} — {hint}: {e}"),
        }
    })?;
    stream.set_read_timeout(Some(TIMEOUT))?;
    stream.set_write_timeout(Some(TIMEOUT))?;
    stream
        .write_all(&request_bytes(port, &method, path, headers, body))
        .with_context(|| format!("sending the request to {addr}"))?;
    let raw =
        read_capped(&mut stream).with_context(|| format!("reading the response of {addr}"))?;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let mut response = parse_response(&raw, shape)?;
    response.insert("elapsed_ms".into(), elapsed_ms.into());
    // The documented key order: status, elapsed_ms, headers, body.
    let mut out = Map::new();
    for key in ["status", "elapsed_ms", "headers", "body"] {
        if let Some(v) = response.remove(key) {
            out.insert(key.into(), v);
        }
    }
    Ok(Json::Object(out))
}

fn request_bytes(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
) -> Vec<u8> {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    let given = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !given("host") {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    head.push_str("Connection: close\r\n");
    for (name, value) in headers {
        if !name.eq_ignore_ascii_case("connection") {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    if let Some(body) = body.filter(|_| !given("content-length")) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.unwrap_or_default());
    bytes
}

/// Everything the server sends until it closes, at most [`MAX_RESPONSE`].
fn read_capped(stream: &mut impl Read) -> Result<Vec<u8>> {
    let mut raw = Vec::new();
    let read = stream.take(MAX_RESPONSE as u64 + 1).read_to_end(&mut raw);
    match read {
        Ok(_) if raw.len() > MAX_RESPONSE => {
            bail!("the response is larger than 1 MiB, the most `cove request` reads")
        }
        Ok(_) => Ok(raw),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut => {
            bail!("no complete response within {} s", TIMEOUT.as_secs())
        }
        Err(e) => Err(e.into()),
    }
}

/// Status, headers (repeated ones joined with `, `) and body, as `shape` says.
fn parse_response(raw: &[u8], shape: Shape) -> Result<Map<String, Json>> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| {
            anyhow!("the server closed the connection before a complete response head")
        })?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("not an HTTP status line: {status_line:?}"))?;
    let mut headers = Map::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let name = match shape {
            Shape::Cove => name.trim().to_ascii_lowercase(),
            Shape::Hull => name.trim().to_string(),
        };
        let value = value.trim();
        match headers.get_mut(&name) {
            Some(Json::String(prev)) => {
                prev.push_str(", ");
                prev.push_str(value);
            }
            _ => {
                headers.insert(name, value.into());
            }
        }
    }
    let mut body = &raw[end + 4..];
    let header = |n: &str| {
        let found = headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(n));
        found.and_then(|(_, v)| v.as_str()).unwrap_or_default()
    };
    let dechunked;
    if header("transfer-encoding").eq_ignore_ascii_case("chunked") {
        dechunked = dechunk(body)?;
        body = &dechunked;
    } else if let Ok(len) = header("content-length").parse::<usize>() {
        body = &body[..len.min(body.len())];
    }
    let body = match shape {
        Shape::Cove => body_json(header("content-type"), body),
        Shape::Hull => String::from_utf8_lossy(body).into_owned().into(),
    };
    let mut out = Map::new();
    out.insert("status".into(), status.into());
    out.insert("headers".into(), Json::Object(headers));
    out.insert("body".into(), body);
    Ok(out)
}

/// A chunked body's data (RFC 9112 §7.1); trailers are dropped.
fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| anyhow!("the chunked response body ends early"))?;
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| anyhow!("bad chunk size {size_text:?} in the response body"))?;
        rest = &rest[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size {
            bail!("the chunked response body ends early");
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
}

/// JSON when the content type says so or the bytes parse as JSON, else the
/// text, else (not UTF-8) `{"base64": …}`.
pub(crate) fn body_json(content_type: &str, body: &[u8]) -> Json {
    let ct = content_type.to_ascii_lowercase();
    let json_type = ct.starts_with("application/json") || ct.contains("+json");
    if json_type || !body.is_empty() {
        if let Ok(v) = serde_json::from_slice::<Json>(body) {
            return v;
        }
    }
    match std::str::from_utf8(body) {
        Ok(text) => text.into(),
        Err(_) => json!({ "base64": crate::inspect::base64(body) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_carry_host_close_and_length() {
        let bytes = request_bytes(
            8080,
            "POST",
            "/x?a=1",
            &[("X-A".into(), "1".into())],
            Some(b"hi"),
        );
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "POST /x?a=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\nX-A: 1\r\n\
             Content-Length: 2\r\n\r\nhi"
        );
    }

    #[test]
    fn responses_parse_with_chunks_and_json() {
        let raw = b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nSet-Cookie: a=1\r\n\
                    set-cookie: b=2\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3;x=y\r\n:1}\r\n0\r\n\r\n";
        let r = parse_response(raw, Shape::Cove).unwrap();
        assert_eq!(r["status"], 201);
        assert_eq!(r["headers"]["set-cookie"], "a=1, b=2");
        assert_eq!(r["body"], json!({ "a": 1 }));
        let hull = parse_response(raw, Shape::Hull).unwrap();
        assert_eq!(hull["headers"]["Set-Cookie"], "a=1");
        assert_eq!(hull["headers"]["set-cookie"], "b=2");
        assert_eq!(hull["body"], "{\"a\":1}");
    }

    #[test]
    fn bodies_are_json_text_or_base64() {
        assert_eq!(body_json("text/plain", b"[1]"), json!([1]));
        assert_eq!(body_json("text/html", b"<p>hi"), json!("<p>hi"));
        assert_eq!(body_json("application/json", b"{oops"), json!("{oops"));
        assert_eq!(body_json("", b""), json!(""));
        assert_eq!(body_json("", &[0xff, 0]), json!({ "base64": "/wA=" }));
    }

    #[test]
    fn bad_input_is_refused_before_connecting() {
        let e = send(1, "G ET", "/", &[], None).unwrap_err();
        assert!(e.to_string().contains("not an HTTP method"), "{e}");
        let e = send(1, "GET", "x", &[], None).unwrap_err();
        assert!(e.to_string().contains("must start with /"), "{e}");
        assert!(parse_header("nocolon").is_err());
        assert_eq!(
            parse_header("A: b: c").unwrap(),
            ("A".to_string(), "b: c".to_string())
        );
    }

    #[test]
    fn oversized_responses_are_refused() {
        let big = vec![b'x'; MAX_RESPONSE + 10];
        let e = read_capped(&mut &big[..]).unwrap_err();
        assert!(e.to_string().contains("larger than 1 MiB"), "{e}");
    }
}
