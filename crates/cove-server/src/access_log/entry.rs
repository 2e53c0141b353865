//! What one access log line is made of.

use std::net::SocketAddr;
use std::time::Duration;

use hyper::Version;

use super::request_id::RequestId;

/// One request, as the access log records it. Borrowed from the request
/// and response, so building one copies nothing.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// When the request started (its head was read), since the Unix epoch.
    pub time: Duration,
    /// The client's address; `None` when there is none (`-`, `null`).
    pub remote: Option<SocketAddr>,
    /// `GET`, `POST`, ... (`Method::as_str`): an HTTP token, which needs
    /// no escaping in either format (no space, quote, backslash, control
    /// or non-ASCII byte).
    pub method: &'a str,
    /// The request target as received: path and query
    /// (`Uri::path_and_query`).
    pub target: &'a str,
    pub version: Version,
    pub status: u16,
    /// The response body's length; `None` when not known (a streamed
    /// body): `-` in combined, `null` in JSON.
    pub bytes: Option<u64>,
    /// From the request's start to its response's end.
    pub duration: Duration,
    /// The route's pattern (`/users/:id`), if a route matched.
    pub route: Option<&'a str>,
    /// The worker that served it.
    pub worker: usize,
    /// The request's id (`request_id::for_request`).
    pub request_id: RequestId<'a>,
    /// The `Referer` and `User-Agent` headers. `HeaderValue::to_str`
    /// refuses non-ASCII; `std::str::from_utf8(value.as_bytes())` keeps
    /// UTF-8 ones.
    pub referer: Option<&'a str>,
    pub user_agent: Option<&'a str>,
}

impl Entry<'_> {
    /// The request line's protocol, as nginx writes it (`HTTP/2.0`).
    pub(crate) fn proto(&self) -> &'static str {
        match self.version {
            Version::HTTP_09 => "HTTP/0.9",
            Version::HTTP_10 => "HTTP/1.0",
            Version::HTTP_11 => "HTTP/1.1",
            Version::HTTP_2 => "HTTP/2.0",
            Version::HTTP_3 => "HTTP/3.0",
            _ => "HTTP/?",
        }
    }

    /// The target split at its first `?`: (path, query).
    pub(crate) fn path_query(&self) -> (&str, Option<&str>) {
        // A plain scan: targets are short, and memchr's setup cost ~70
        // instructions here, `str::split_once` ~150.
        match self.target.bytes().position(|b| b == b'?') {
            Some(at) => (&self.target[..at], Some(&self.target[at + 1..])),
            None => (self.target, None),
        }
    }
}
