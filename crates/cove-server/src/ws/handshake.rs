//! The opening handshake (RFC 6455 §4.2): whether a request asks for a
//! WebSocket as the protocol requires, and the answers: 101 with
//! `Sec-WebSocket-Accept`, or the status that says what is wrong.
//!
//! Neither subprotocols (`Sec-WebSocket-Protocol`) nor extensions
//! (`permessage-deflate`) are negotiated: the 101 names none, so a client
//! that offered them goes on without them.

use hyper::header::{
    HeaderMap, HeaderValue, CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY,
    SEC_WEBSOCKET_VERSION, UPGRADE,
};
use hyper::{Method, Version};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::convert::{closing, HttpResponse};
use crate::Body;

/// Why a request is not a WebSocket handshake, and its answer's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// 400: not GET.
    Method,
    /// 400: not HTTP/1.1 (HTTP/1.0 cannot upgrade; HTTP/2 would need
    /// RFC 8441's extended CONNECT, which is not offered).
    Version,
    /// 426: no `Upgrade: websocket` with `Connection: upgrade`.
    NotUpgrade,
    /// 426: a `Sec-WebSocket-Version` other than 13.
    WsVersion,
    /// 400: no `Sec-WebSocket-Key`, or not 16 bytes in base64.
    Key,
}

impl Refusal {
    /// The answer: 400 or 426 (with the `Upgrade` or
    /// `Sec-WebSocket-Version` it lacked), closing the connection.
    pub(crate) fn response(self) -> HttpResponse {
        let (status, text) = match self {
            Refusal::Method => (400, "Bad Request: a WebSocket handshake is a GET request"),
            Refusal::Version => (400, "Bad Request: WebSocket needs HTTP/1.1"),
            Refusal::NotUpgrade => (
                426,
                "Upgrade Required: this is a WebSocket endpoint (Upgrade: websocket)",
            ),
            Refusal::WsVersion => (426, "Upgrade Required: Sec-WebSocket-Version must be 13"),
            Refusal::Key => (
                400,
                "Bad Request: Sec-WebSocket-Key must be 16 bytes in base64",
            ),
        };
        let mut res = closing(status, text);
        let headers = res.headers_mut();
        match self {
            Refusal::NotUpgrade => {
                headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
            }
            Refusal::WsVersion => {
                headers.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
            }
            _ => {}
        }
        res
    }
}

/// The `Sec-WebSocket-Accept` for a request that is a valid handshake.
pub(crate) fn check(
    method: &Method,
    version: Version,
    headers: &HeaderMap,
) -> Result<String, Refusal> {
    if method != Method::GET {
        return Err(Refusal::Method);
    }
    if version != Version::HTTP_11 {
        return Err(Refusal::Version);
    }
    if !has_token(headers, &UPGRADE, "websocket") || !has_token(headers, &CONNECTION, "upgrade") {
        return Err(Refusal::NotUpgrade);
    }
    match headers.get(SEC_WEBSOCKET_VERSION) {
        Some(v) if v.as_bytes().trim_ascii() == b"13" => {}
        _ => return Err(Refusal::WsVersion),
    }
    match headers.get(SEC_WEBSOCKET_KEY) {
        Some(key) if is_key(key.as_bytes()) => Ok(derive_accept_key(key.as_bytes())),
        _ => Err(Refusal::Key),
    }
}

/// The 101 that completes the handshake.
pub(crate) fn switching(accept: &str) -> HttpResponse {
    let mut res = hyper::Response::new(Body::empty());
    *res.status_mut() = hyper::StatusCode::SWITCHING_PROTOCOLS;
    let headers = res.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
    if let Ok(v) = HeaderValue::from_str(accept) {
        headers.insert(SEC_WEBSOCKET_ACCEPT, v);
    }
    res
}

/// Whether one of `name`'s values lists `token` (comma-separated, any case).
fn has_token(headers: &HeaderMap, name: &hyper::header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.as_bytes()
            .split(|&b| b == b',')
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    })
}

/// 16 bytes in base64: 22 characters of the alphabet and `==`.
fn is_key(key: &[u8]) -> bool {
    let key = key.trim_ascii();
    key.len() == 24
        && key.ends_with(b"==")
        && key[..22]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(*n, HeaderValue::from_static(v));
        }
        h
    }

    const GOOD: [(&str, &str); 4] = [
        ("upgrade", "websocket"),
        ("connection", "keep-alive, Upgrade"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn the_rfc_example_gets_its_accept_key() {
        // RFC 6455 §1.3's worked example.
        let got = check(&Method::GET, Version::HTTP_11, &headers(&GOOD)).unwrap();
        assert_eq!(got, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        let res = switching(&got);
        assert_eq!(res.status(), 101);
        assert_eq!(
            res.headers()[SEC_WEBSOCKET_ACCEPT],
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(res.headers()[UPGRADE], "websocket");
    }

    #[test]
    fn each_missing_piece_is_named() {
        let h = headers(&GOOD);
        assert_eq!(
            check(&Method::POST, Version::HTTP_11, &h),
            Err(Refusal::Method)
        );
        assert_eq!(
            check(&Method::GET, Version::HTTP_10, &h),
            Err(Refusal::Version)
        );
        assert_eq!(
            check(&Method::GET, Version::HTTP_2, &h),
            Err(Refusal::Version)
        );
        let without = |name: &str| {
            let pairs: Vec<_> = GOOD.iter().copied().filter(|(n, _)| *n != name).collect();
            check(&Method::GET, Version::HTTP_11, &headers(&pairs))
        };
        assert_eq!(without("upgrade"), Err(Refusal::NotUpgrade));
        assert_eq!(without("connection"), Err(Refusal::NotUpgrade));
        assert_eq!(without("sec-websocket-version"), Err(Refusal::WsVersion));
        assert_eq!(without("sec-websocket-key"), Err(Refusal::Key));
        let mut h = headers(&GOOD);
        h.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("8"));
        assert_eq!(
            check(&Method::GET, Version::HTTP_11, &h),
            Err(Refusal::WsVersion)
        );
        h = headers(&GOOD);
        h.insert(SEC_WEBSOCKET_KEY, HeaderValue::from_static("short=="));
        assert_eq!(check(&Method::GET, Version::HTTP_11, &h), Err(Refusal::Key));
        h.insert(
            SEC_WEBSOCKET_KEY,
            HeaderValue::from_static("dGhlIHNhbXBsZSBub25jZ!=="),
        );
        assert_eq!(check(&Method::GET, Version::HTTP_11, &h), Err(Refusal::Key));
    }

    #[test]
    fn refusals_say_what_would_be_accepted() {
        let res = Refusal::NotUpgrade.response();
        assert_eq!(res.status(), 426);
        assert_eq!(res.headers()[UPGRADE], "websocket");
        let res = Refusal::WsVersion.response();
        assert_eq!(res.status(), 426);
        assert_eq!(res.headers()[SEC_WEBSOCKET_VERSION], "13");
        assert_eq!(Refusal::Key.response().status(), 400);
        assert_eq!(Refusal::Method.response().headers()[CONNECTION], "close");
    }
}
