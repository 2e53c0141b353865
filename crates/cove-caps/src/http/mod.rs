//! `http` (Hull §6.7): the outbound client, declared once here with its Lua
//! and JS names. Requests go only to hosts the manifest lists.
//!
//! [`HttpFn::prepare`] checks a request on the worker's thread (cheap; its
//! errors raise at the call), [`Prepared::send`] does the network work and
//! blocks, so runtimes run it on the server's blocking pool when they can.

mod audit;
mod send;
#[cfg(test)]
mod tests;
mod url;

use std::time::Duration;

pub use send::verbatim;
pub use url::Target;
pub(crate) use url::{allowed as host_allowed, denied as host_denied};

/// User headers per request (Hull).
pub const MAX_HEADERS: usize = 64;
/// The whole request head: request line, Host, user headers, framing.
pub const MAX_HEAD: usize = 4096;
/// Response bodies larger than this fail the request.
pub const MAX_RESPONSE: u64 = 4 * 1024 * 1024;
/// Each phase: resolve, connect, send, receive.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Where a function finds its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `request(method, url, {body, headers})`.
    Request,
    /// `get(url, {headers})`: this method, no body.
    NoBody(&'static str),
    /// `post(url, body, {headers})`: this method; a non-string body sends none.
    WithBody(&'static str),
}

/// Where a shape's arguments are (0-based). Without a positional body the
/// body is `opts.body`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Positions {
    pub method: Option<usize>,
    pub url: usize,
    pub body: Option<usize>,
    pub opts: usize,
}

impl Shape {
    pub fn positions(self) -> Positions {
        let (method, url, body, opts) = match self {
            Shape::Request => (Some(0), 1, None, 2),
            Shape::NoBody(_) => (None, 0, None, 1),
            Shape::WithBody(_) => (None, 0, Some(1), 2),
        };
        Positions {
            method,
            url,
            body,
            opts,
        }
    }
}

/// One script-facing function.
#[derive(Debug)]
pub struct HttpFn {
    /// `None`: JS only (`http.del`).
    pub lua: Option<&'static str>,
    pub js: &'static str,
    pub shape: Shape,
    /// Hull's error message, which Cove's messages start with.
    pub failed: &'static str,
}

macro_rules! f {
    ($lua:expr, $js:literal, $shape:expr, $failed:literal) => {
        HttpFn {
            lua: $lua,
            js: $js,
            shape: $shape,
            failed: $failed,
        }
    };
}

/// Every http function. The `…Async` JS forms and the Lua suspension are
/// made from these by the bindings.
pub const FUNCTIONS: &[HttpFn] = &[
    f!(
        Some("request"),
        "request",
        Shape::Request,
        "http request failed"
    ),
    f!(Some("get"), "get", Shape::NoBody("GET"), "http.get failed"),
    f!(
        Some("post"),
        "post",
        Shape::WithBody("POST"),
        "http.POST failed"
    ),
    f!(
        Some("put"),
        "put",
        Shape::WithBody("PUT"),
        "http.PUT failed"
    ),
    f!(
        Some("patch"),
        "patch",
        Shape::WithBody("PATCH"),
        "http.PATCH failed"
    ),
    f!(
        Some("delete"),
        "delete",
        Shape::NoBody("DELETE"),
        "http.delete failed"
    ),
    f!(None, "del", Shape::NoBody("DELETE"), "http.del failed"),
];

/// What went wrong, as a stable code per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    NotConfigured,
    /// The host is not in the manifest.
    Denied,
    /// A malformed URL, method or header, or a limit exceeded.
    Invalid,
    /// DNS, connect, TLS or I/O failure.
    Network,
    Timeout,
    /// The response body exceeds [`MAX_RESPONSE`].
    TooLarge,
}

/// An http failure; the message starts with Hull's (`http.get failed: …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HttpError {
    pub kind: Kind,
    pub message: String,
}

impl HttpError {
    pub fn code(&self) -> &'static str {
        match self.kind {
            Kind::NotConfigured => "http.not_configured",
            Kind::Denied => "http.denied",
            Kind::Invalid => "http.invalid",
            Kind::Network => "http.network",
            Kind::Timeout => "http.timeout",
            Kind::TooLarge => "http.too_large",
        }
    }

    /// As scripts see it, with its code.
    pub fn cap(&self) -> cove_core::CapError {
        cove_core::CapError::new(self.code(), self.message.clone())
    }

    fn not_configured() -> HttpError {
        HttpError {
            kind: Kind::NotConfigured,
            message: "http not configured (no hosts in manifest)".into(),
        }
    }

    pub(crate) fn new(kind: Kind, failed: &str, reason: impl std::fmt::Display) -> HttpError {
        HttpError {
            kind,
            message: format!("{failed}: {reason}"),
        }
    }
}

/// A request as the script gave it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub method: String,
    pub url: String,
    /// In the order given.
    pub headers: Vec<(String, String)>,
    /// `None` or empty: no body (and no Content-Length).
    pub body: Option<Vec<u8>>,
}

/// The response: names lower-cased, the last of duplicates kept (at the
/// place the name first appeared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A checked request, ready to send.
#[derive(Debug, Clone)]
pub struct Prepared {
    failed: &'static str,
    target: Target,
    req: Request,
    /// With the audit log on: whom the request is for, taken where the
    /// script asked (sending may happen on another thread).
    audit: Option<cove_core::audit::Context>,
}

/// Headers Cove sets itself; a script's value would contradict the framing.
const RESERVED: [&str; 3] = ["content-length", "transfer-encoding", "connection"];

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl HttpFn {
    /// The request from the arguments as the binding read them at
    /// [`Shape::positions`]: `method` for `request` only.
    pub fn request(
        &self,
        method: Option<String>,
        url: String,
        body: Option<Vec<u8>>,
        headers: Vec<(String, String)>,
    ) -> Request {
        let method = match self.shape {
            Shape::Request => method.unwrap_or_default().to_ascii_uppercase(),
            Shape::NoBody(m) | Shape::WithBody(m) => m.to_string(),
        };
        Request {
            method,
            url,
            headers,
            body,
        }
    }

    /// Check `req` against the manifest's `hosts` and Hull's limits.
    pub fn prepare(&self, hosts: &[String], req: Request) -> Result<Prepared, HttpError> {
        if hosts.is_empty() {
            return Err(HttpError::not_configured());
        }
        let invalid = |reason: String| HttpError::new(Kind::Invalid, self.failed, reason);
        let target = url::parse(&req.url).map_err(invalid)?;
        if !url::allowed(hosts, &target.host) {
            if cove_core::audit::enabled() {
                audit::denied(&req, &target);
            }
            if cove_core::telemetry::on() {
                crate::metrics::outbound("http", &target.host, "denied");
            }
            return Err(HttpError::new(
                Kind::Denied,
                self.failed,
                url::denied(hosts, &target.host),
            ));
        }
        if !is_token(&req.method) {
            return Err(invalid(format!("invalid method {:?}", req.method)));
        }
        if req.headers.len() > MAX_HEADERS {
            return Err(invalid(format!(
                "{} headers; the limit is {MAX_HEADERS}",
                req.headers.len()
            )));
        }
        // Hull's head: `METHOD path HTTP/1.1`, Host, the headers,
        // Content-Length, `Connection: close`, blank line.
        let path = url::path(&req.url).len();
        let mut head = req.method.len() + path + 11 + target.host.len() + 8 + 19 + 2;
        for (name, value) in &req.headers {
            if [name, value].iter().any(|s| s.contains(['\r', '\n', '\0'])) {
                return Err(invalid(format!("header {name:?} contains CR, LF or NUL")));
            }
            if !is_token(name) {
                return Err(invalid(format!("invalid header name {name:?}")));
            }
            if RESERVED.iter().any(|r| name.eq_ignore_ascii_case(r)) {
                return Err(invalid(format!(
                    "header {name:?} is set by Cove (from the body; connections are closed after each request)"
                )));
            }
            head += name.len() + value.len() + 4;
        }
        if let Some(body) = req.body.as_ref().filter(|b| !b.is_empty()) {
            head += 18 + body.len().to_string().len();
        }
        if head > MAX_HEAD {
            return Err(invalid(format!(
                "the request head is {head} bytes; the limit is {MAX_HEAD}"
            )));
        }
        Ok(Prepared {
            failed: self.failed,
            target,
            req,
            audit: cove_core::audit::enabled().then(cove_core::audit::context),
        })
    }
}

impl Prepared {
    /// Where it goes.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Send it and read the whole response. Blocks for up to [`TIMEOUT`]
    /// per phase.
    pub fn send(mut self) -> Result<Response, HttpError> {
        let host = cove_core::telemetry::on().then(|| self.target.host.clone());
        let result = match self.audit.take() {
            None => send::send(self),
            Some(ctx) => audit::send_logged(self, &ctx),
        };
        if let Some(host) = host {
            let outcome = match &result {
                Ok(res) => crate::metrics::status_class(res.status),
                Err(_) => "error",
            };
            crate::metrics::outbound("http", &host, outcome);
        }
        result
    }
}
