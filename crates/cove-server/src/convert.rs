//! hyper types ⇄ cove-core types.

use hyper::header::{HeaderName, HeaderValue, CONNECTION, CONTENT_TYPE};
use hyper::http::request::Parts;
use hyper::{ext::ReasonPhrase, Method, StatusCode};

use std::borrow::Cow;

use cove_core::{Request, Response};

use crate::Body;

pub(crate) type HttpResponse = hyper::Response<Body>;

/// The request head as scripts see it (the headers move over, uncopied);
/// the body is read later.
pub(crate) fn request_head(parts: &mut Parts) -> Request {
    Request {
        method: method_name(&parts.method),
        path: parts.uri.path().to_string(),
        query: parts.uri.query().map(str::to_string),
        headers: std::mem::take(&mut parts.headers),
        body: None,
        params: Default::default(),
    }
}

/// The method's name, borrowed when it is one of the common ones.
fn method_name(m: &Method) -> Cow<'static, str> {
    const COMMON: [(Method, &str); 7] = [
        (Method::GET, "GET"),
        (Method::POST, "POST"),
        (Method::PUT, "PUT"),
        (Method::DELETE, "DELETE"),
        (Method::PATCH, "PATCH"),
        (Method::HEAD, "HEAD"),
        (Method::OPTIONS, "OPTIONS"),
    ];
    match COMMON.iter().find(|(c, _)| c == m) {
        Some((_, name)) => Cow::Borrowed(name),
        None => Cow::Owned(m.as_str().to_string()),
    }
}

/// Build the wire response. Names and values were validated when the script
/// set them; anything hyper still rejects is dropped rather than panicking.
pub(crate) fn to_http(res: Response) -> HttpResponse {
    let status = StatusCode::from_u16(res.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut out = hyper::Response::new(Body::bytes(res.body));
    *out.status_mut() = status;
    if status.canonical_reason().is_none() {
        out.extensions_mut().insert(generic_reason(status));
    }
    let headers = out.headers_mut();
    headers.reserve(res.headers.len() + 1);
    let content_type = match (res.content_type.as_deref(), res.body_type) {
        (Some(explicit), _) => HeaderValue::from_str(explicit).ok(),
        // Body types are static strings: no validation or copy needed.
        (None, Some(t)) => Some(HeaderValue::from_static(t)),
        (None, None) => None,
    };
    if let Some(v) = content_type {
        headers.insert(CONTENT_TYPE, v);
    }
    for (name, value) in res.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            headers.append(n, v);
        }
    }
    out
}

/// Reason phrase for codes without a registered one (e.g. 599).
fn generic_reason(status: StatusCode) -> ReasonPhrase {
    ReasonPhrase::from_static(match status.as_u16() {
        200..=299 => b"Success",
        300..=399 => b"Redirection",
        400..=499 => b"Client Error",
        _ => b"Server Error",
    })
}

/// A server-generated plain response that also closes the connection.
pub(crate) fn closing(status: u16, body: &'static str) -> HttpResponse {
    let mut res = to_http(Response::plain(status, body));
    res.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_codes_get_a_generic_reason() {
        let mut r = Response::new();
        r.set_status(599).unwrap();
        let out = to_http(r);
        let reason = out.extensions().get::<ReasonPhrase>().unwrap();
        assert_eq!(reason.as_bytes(), b"Server Error");
        let mut r = Response::new();
        r.set_status(418).unwrap();
        assert!(to_http(r).extensions().get::<ReasonPhrase>().is_none());
    }

    #[test]
    fn content_type_goes_out_once() {
        let mut r = Response::new();
        r.add_header("Content-Type", "text/csv").unwrap();
        r.json("[]");
        let out = to_http(r);
        let all: Vec<_> = out.headers().get_all(CONTENT_TYPE).iter().collect();
        assert_eq!(all, vec!["text/csv"]);
    }
}
