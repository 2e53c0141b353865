//! `cove request METHOD PATH`: one HTTP request to the local dev server, the
//! response as one JSON line (Hull's `hull agent request`, §1.4), for agents
//! that would otherwise have to parse curl's output. `cove mcp`'s `request`
//! tool sends through [`send`] too, so middleware, body limits and the
//! sandbox apply as they do to a browser.
//!
//! HTTP/1.1 with ureq, one request per connection.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use serde_json::{json, Map, Value as Json};
use ureq::http::Request;
use ureq::Agent;

use crate::cli::RequestArgs;

/// Connect, read and write timeouts: a stuck handler fails the call rather
/// than hanging an agent.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The largest response body read.
const MAX_RESPONSE: usize = 1 << 20;

/// How the response is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Header names lowercased, the body parsed (see [`body_json`]).
    Cove,
    /// Hull's `agent request`: the body as text.
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

/// What was asked is what is sent (`Host` and `Content-Length` aside).
fn agent() -> Agent {
    cove_caps::http::verbatim()
        .timeout_global(Some(TIMEOUT))
        .build()
        .new_agent()
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
    let mut request = Request::builder()
        .method(method.as_str())
        .uri(format!("http://{addr}{path}"))
        .header("connection", "close");
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let invalid = |e: ureq::http::Error| anyhow!("invalid request: {e}");
    let started = Instant::now();
    // Without -d no body at all: not even `Content-Length: 0` on a GET.
    let sent = match body {
        Some(body) => agent().run(request.body(body.to_vec()).map_err(invalid)?),
        None => agent().run(request.body(()).map_err(invalid)?),
    };
    let mut res = sent.map_err(|e| failed(addr, e))?;
    let raw = res
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE as u64)
        .read_to_vec()
        .map_err(|e| failed(addr, e))?;
    let elapsed_ms = started.elapsed().as_millis() as u64;
    // Repeated headers joined with `, `; `http` names are lower-case.
    let mut names = Map::new();
    for (name, value) in res.headers() {
        let value = String::from_utf8_lossy(value.as_bytes());
        match names.get_mut(name.as_str()) {
            Some(Json::String(prev)) => {
                prev.push_str(", ");
                prev.push_str(&value);
            }
            _ => {
                names.insert(name.as_str().to_string(), value.into_owned().into());
            }
        }
    }
    let body = match shape {
        Shape::Cove => {
            let content_type = names.get("content-type").and_then(Json::as_str);
            body_json(content_type.unwrap_or_default(), &raw)
        }
        Shape::Hull => String::from_utf8_lossy(&raw).into_owned().into(),
    };
    Ok(json!({
        "status": res.status().as_u16(),
        "elapsed_ms": elapsed_ms,
        "headers": names,
        "body": body,
    }))
}

/// What went wrong, and what to do about it.
fn failed(addr: SocketAddr, e: ureq::Error) -> anyhow::Error {
    let hint = "is `cove dev` running? (start it with `cove dev`)";
    match e {
        ureq::Error::ConnectionFailed => anyhow!("cannot connect to {addr} — {hint}"),
        ureq::Error::Io(io) if io.kind() == io::ErrorKind::ConnectionRefused => {
            anyhow!("cannot connect to {addr} — {hint}")
        }
        ureq::Error::Timeout(_) => {
            anyhow!(
                "no complete response from {addr} within {} s",
                TIMEOUT.as_secs()
            )
        }
        ureq::Error::BodyExceedsLimit(_) => {
            anyhow!("the response is larger than 1 MiB, the most `cove request` reads")
        }
        other => anyhow!("{addr}: {other}"),
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
}
