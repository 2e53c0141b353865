//! `--redirect-http PORT`: plain HTTP answered with a 308 to the same URL
//! over HTTPS, so `http://example.com/x` lands on `https://example.com/x`.

use std::net::TcpListener as StdListener;

use bytes::Bytes;
use hyper::header::{HeaderValue, HOST, LOCATION};
use hyper::{Request, Response, StatusCode};
use tokio::net::TcpListener;

use crate::config::HttpLimits;
use crate::Body;

/// Where a request for `host` and `target` goes over HTTPS on `https_port`;
/// `None` if the host is missing or not a plain host name or address.
pub(crate) fn location(host: Option<&str>, target: &str, https_port: u16) -> Option<String> {
    let host = host?;
    // The name without a port ("example.com:80", "[::1]:80").
    let name = match host.rfind(':') {
        Some(i) if !host[i..].contains(']') => &host[..i],
        _ => host,
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':');
    if name.is_empty() || !name.chars().all(plain) {
        return None;
    }
    let target = if target.starts_with('/') { target } else { "/" };
    Some(match https_port {
        443 => format!("https://{name}{target}"),
        port => format!("https://{name}:{port}{target}"),
    })
}

fn answer(req: &Request<hyper::body::Incoming>, https_port: u16) -> Response<Body> {
    let host = req
        .headers()
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .or(req.uri().host());
    let target = req.uri().path_and_query().map_or("/", |p| p.as_str());
    let mut res = Response::new(Body::empty());
    match location(host, target, https_port).and_then(|l| HeaderValue::try_from(l).ok()) {
        Some(to) => {
            *res.status_mut() = StatusCode::PERMANENT_REDIRECT;
            res.headers_mut().insert(LOCATION, to);
        }
        None => {
            *res.status_mut() = StatusCode::BAD_REQUEST;
            *res.body_mut() = Body::bytes(Bytes::from_static(b"Bad Request: no valid Host header"));
        }
    }
    res
}

/// Answer every request on `listener` with a redirect to `https_port`,
/// until the task is dropped; in a `LocalSet` (the main thread's), with the
/// app's header and idle timeouts.
pub(crate) async fn serve(listener: StdListener, https_port: u16, limits: HttpLimits) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    crate::side_listener::serve(listener, limits, move |req| answer(req, https_port)).await;
}

#[cfg(test)]
mod tests {
    use super::location;

    #[test]
    fn the_location_keeps_host_path_and_query() {
        let at = |host, target, port| location(host, target, port);
        assert_eq!(
            at(Some("example.com"), "/a?b=1", 443).as_deref(),
            Some("https://example.com/a?b=1")
        );
        assert_eq!(
            at(Some("example.com:8080"), "/", 8443).as_deref(),
            Some("https://example.com:8443/")
        );
        assert_eq!(
            at(Some("[::1]:80"), "/x", 443).as_deref(),
            Some("https://[::1]/x")
        );
        assert_eq!(
            at(Some("[::1]"), "/x", 443).as_deref(),
            Some("https://[::1]/x")
        );
        assert_eq!(at(None, "/", 443), None);
        assert_eq!(at(Some("evil.com/\r\nx"), "/", 443), None);
        assert_eq!(
            at(Some("a.com"), "*", 443).as_deref(),
            Some("https://a.com/")
        );
    }
}
