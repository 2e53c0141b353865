//! The response a handler builds (Hull §4.2), with Hull's framing bugs fixed:
//! any status 200–599 is sent with its own reason phrase, and `Content-Type`
//! and `Location` are single-valued (setting them replaces, never duplicates).

use bytes::Bytes;

/// Default Content-Security-Policy sent with `res:html` (Hull §11.2).
pub const DEFAULT_CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; \
form-action 'self'; frame-ancestors 'none'";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResponseError {
    #[error("invalid status code {0} (expected an integer from 200 to 599)")]
    Status(i64),
    #[error("invalid header name {0:?}")]
    HeaderName(String),
    #[error("header {0:?} has a value with CR, LF or NUL in it")]
    HeaderValue(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// App headers in call order (Content-Type is kept in `content_type`).
    pub headers: Vec<(String, String)>,
    /// Content-Type set explicitly with `res:header`; wins over `body_type`.
    pub content_type: Option<String>,
    /// Content-Type implied by the last body method (`json`, `text`, `html`).
    pub body_type: Option<&'static str>,
    pub body: Bytes,
    /// Set when the handler made this response a Server-Sent Events stream
    /// or published messages (events.rs); boxed, as almost no response
    /// does either.
    pub live: Option<Box<crate::LiveParts>>,
}

impl Default for Response {
    fn default() -> Self {
        Self::new()
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

impl Response {
    /// A 200 with no headers and no body (`const`: a thread-local slot
    /// starts as one).
    pub const fn new() -> Self {
        Response {
            status: 200,
            headers: Vec::new(),
            content_type: None,
            body_type: None,
            body: Bytes::new(),
            live: None,
        }
    }

    pub fn set_status(&mut self, code: i64) -> Result<(), ResponseError> {
        if !(200..=599).contains(&code) {
            return Err(ResponseError::Status(code));
        }
        self.status = code as u16;
        Ok(())
    }

    /// Append a header. `Content-Type` and `Location` replace any earlier
    /// value; `Content-Length` and `Transfer-Encoding` are owned by the server
    /// and ignored.
    pub fn add_header(&mut self, name: &str, value: &str) -> Result<(), ResponseError> {
        if !valid_name(name) {
            return Err(ResponseError::HeaderName(name.to_string()));
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(ResponseError::HeaderValue(name.to_string()));
        }
        // The audit log names requests by the id the app gives them (the
        // logger middleware's); the flag first: this is every header's path.
        if crate::audit::enabled() && name.eq_ignore_ascii_case("x-request-id") {
            crate::audit::adopt_request_id(value);
        }
        if name.eq_ignore_ascii_case("content-type") {
            self.content_type = Some(value.to_string());
        } else if name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
        {
        } else if name.eq_ignore_ascii_case("location") {
            self.headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case("location"));
            self.headers.push((name.to_string(), value.to_string()));
        } else {
            self.headers.push((name.to_string(), value.to_string()));
        }
        Ok(())
    }

    pub fn set_body(&mut self, body: impl Into<Bytes>, body_type: &'static str) {
        self.body = body.into();
        self.body_type = Some(body_type);
    }

    pub fn json(&mut self, body: impl Into<Bytes>) {
        self.set_body(body, "application/json");
    }

    pub fn text(&mut self, body: impl Into<Bytes>) {
        self.set_body(body, "text/plain; charset=utf-8");
    }

    /// HTML body plus the app's CSP (`None` when the manifest disables it).
    pub fn html(&mut self, body: impl Into<Bytes>, csp: Option<&str>) {
        self.set_body(body, "text/html; charset=utf-8");
        if let Some(csp) = csp {
            self.headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case("content-security-policy"));
            self.headers
                .push(("Content-Security-Policy".to_string(), csp.to_string()));
        }
    }

    pub fn redirect(&mut self, url: &str, code: Option<i64>) -> Result<(), ResponseError> {
        self.set_status(code.unwrap_or(302))?;
        self.add_header("Location", url)?;
        self.body = Bytes::new();
        Ok(())
    }

    /// The effective Content-Type, if any.
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_deref().or(self.body_type)
    }

    /// A plain-text response the server generates itself (404, 405, 413, 500).
    pub fn plain(status: u16, body: &'static str) -> Self {
        Response {
            status,
            body_type: Some("text/plain; charset=utf-8"),
            body: Bytes::from_static(body.as_bytes()),
            ..Response::default()
        }
    }

    /// Turn whatever the handler built into a 500, keeping its other headers.
    pub fn fail(&mut self) {
        self.status = 500;
        self.content_type = None;
        self.body_type = Some("text/plain; charset=utf-8");
        self.body = Bytes::from_static(b"Internal Server Error");
    }

    /// Replace the response with a 503 that asks the client to retry: the
    /// handler failed because a backend (the database) could not be reached.
    pub fn unavailable(&mut self) {
        self.status = 503;
        self.content_type = None;
        self.body_type = Some("text/plain; charset=utf-8");
        self.body = Bytes::from_static(b"Service Unavailable");
        self.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("retry-after"));
        self.headers
            .push(("Retry-After".to_string(), "1".to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_range() {
        let mut r = Response::new();
        assert!(r.set_status(303).is_ok());
        assert_eq!(r.status, 303);
        assert_eq!(r.set_status(99), Err(ResponseError::Status(99)));
        assert_eq!(r.set_status(600), Err(ResponseError::Status(600)));
        assert_eq!(r.status, 303);
    }

    #[test]
    fn content_type_header_replaces_and_wins_over_body_type() {
        let mut r = Response::new();
        r.add_header("Content-Type", "text/csv").unwrap();
        r.add_header("content-type", "application/vnd.api+json")
            .unwrap();
        r.json("{}");
        assert_eq!(r.content_type(), Some("application/vnd.api+json"));
        assert!(r.headers.is_empty());
    }

    #[test]
    fn body_methods_set_type_last_one_wins() {
        let mut r = Response::new();
        r.text("a");
        r.json("[]");
        assert_eq!(r.content_type(), Some("application/json"));
        assert_eq!(&r.body[..], b"[]");
    }

    #[test]
    fn repeatable_headers_append() {
        let mut r = Response::new();
        r.add_header("Set-Cookie", "a=1").unwrap();
        r.add_header("Set-Cookie", "b=2").unwrap();
        assert_eq!(r.headers.len(), 2);
    }

    #[test]
    fn bad_headers_are_errors() {
        let mut r = Response::new();
        assert!(r.add_header("X-A", "x\r\nEvil: 1").is_err());
        assert!(r.add_header("Bad Name", "x").is_err());
        assert!(r.add_header("", "x").is_err());
    }

    #[test]
    fn redirect_sets_location_once() {
        let mut r = Response::new();
        r.redirect("/a", None).unwrap();
        r.redirect("/b", Some(303)).unwrap();
        assert_eq!(r.status, 303);
        assert_eq!(r.headers, vec![("Location".into(), "/b".into())]);
    }

    #[test]
    fn html_adds_csp_once() {
        let mut r = Response::new();
        r.html("<p>", Some(DEFAULT_CSP));
        r.html("<p>", Some(DEFAULT_CSP));
        assert_eq!(r.headers.len(), 1);
        let mut r = Response::new();
        r.html("<p>", None);
        assert!(r.headers.is_empty());
    }

    #[test]
    fn fail_keeps_other_headers() {
        let mut r = Response::new();
        r.add_header("X-Trace", "1").unwrap();
        r.add_header("Content-Type", "text/csv").unwrap();
        r.fail();
        assert_eq!(r.status, 500);
        assert_eq!(r.content_type(), Some("text/plain; charset=utf-8"));
        assert_eq!(r.headers.len(), 1);
    }
}
