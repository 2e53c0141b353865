//! Requests refused before any handler sees them, for what hyper's parser
//! lets through: a head with both `Content-Length` and `Transfer-Encoding`
//! (400, RFC 9112 §6.3; hyper drops the first, so the connection's stream
//! spots it, see timeouts.rs), a request target over the URL limit (414),
//! and a missing or repeated `Host` (400, RFC 9112 §3.2). hyper answers the
//! rest of the malformed requests itself (docs/security.md).

use hyper::header::{HeaderValue, HOST};
use hyper::{Request, Version};

use crate::convert::{closing, HttpResponse};

/// The answer to a request that must not reach the app, if `req` is one;
/// `framing_conflict`: its head had both `Content-Length` and
/// `Transfer-Encoding`. All close the connection: the client is broken or
/// hostile, or a proxy in front may read its body differently.
#[inline]
pub(crate) fn check<B>(
    req: &Request<B>,
    max_url: usize,
    framing_conflict: bool,
) -> Option<HttpResponse> {
    if framing_conflict {
        return Some(closing(400, "Bad Request"));
    }
    let target = req.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if target > max_url {
        return Some(closing(414, "URI Too Long"));
    }
    let mut hosts = req.headers().get_all(HOST).iter();
    let missing = hosts.next().is_none();
    // HTTP/1.0 predates Host; a repeated one is refused in any version.
    if (missing && req.version() != Version::HTTP_10) || (!missing && hosts.next().is_some()) {
        return Some(closing(400, "Bad Request"));
    }
    None
}

/// HTTP/2 names the host in the `:authority` pseudo-header, which hyper
/// puts in the URI; apps (and [`check`]) read `Host`, so it is added from
/// there when the client sent none (RFC 9113 §8.3.1).
#[inline]
pub(crate) fn host_from_authority<B>(req: &mut Request<B>) {
    if req.headers().contains_key(HOST) {
        return;
    }
    let host = req
        .uri()
        .authority()
        .and_then(|a| HeaderValue::from_str(a.as_str()).ok());
    if let Some(host) = host {
        req.headers_mut().insert(HOST, host);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(version: Version, target: &str, hosts: &[&str]) -> Request<()> {
        let mut b = Request::get(target).version(version);
        for h in hosts {
            b = b.header(HOST, *h);
        }
        b.body(()).unwrap()
    }

    fn status(r: &Request<()>) -> Option<u16> {
        check(r, 16, false).map(|res| res.status().as_u16())
    }

    #[test]
    fn http2_authority_becomes_the_host() {
        let mut r = Request::get("https://example.com:8443/a")
            .version(Version::HTTP_2)
            .body(())
            .unwrap();
        host_from_authority(&mut r);
        assert_eq!(r.headers()[HOST], "example.com:8443");
        assert_eq!(status(&r), None);
        // A Host the client sent stays as it is.
        let mut r = req(Version::HTTP_2, "/a", &["given"]);
        host_from_authority(&mut r);
        assert_eq!(r.headers()[HOST], "given");
    }

    #[test]
    fn one_host_passes() {
        assert_eq!(status(&req(Version::HTTP_11, "/a?b=c", &["x"])), None);
        assert_eq!(status(&req(Version::HTTP_10, "/", &["x"])), None);
    }

    #[test]
    fn http_1_1_without_host_is_400() {
        assert_eq!(status(&req(Version::HTTP_11, "/", &[])), Some(400));
    }

    #[test]
    fn http_1_0_without_host_passes() {
        assert_eq!(status(&req(Version::HTTP_10, "/", &[])), None);
    }

    #[test]
    fn two_hosts_are_400_in_any_version() {
        assert_eq!(status(&req(Version::HTTP_11, "/", &["a", "b"])), Some(400));
        assert_eq!(status(&req(Version::HTTP_10, "/", &["a", "a"])), Some(400));
    }

    #[test]
    fn a_target_over_the_limit_is_414() {
        // 16 bytes is the limit: the path and query count, not the host.
        assert_eq!(
            status(&req(Version::HTTP_11, "/0123456789abcde", &["x"])),
            None
        );
        assert_eq!(
            status(&req(Version::HTTP_11, "/0123456789?bcdef", &["x"])),
            Some(414)
        );
        let closes = check(
            &req(Version::HTTP_11, "/0123456789abcdef", &["x"]),
            16,
            false,
        )
        .unwrap();
        assert_eq!(closes.headers()["connection"], "close");
    }

    #[test]
    fn a_framing_conflict_is_400_and_closes() {
        // Whatever else the request is: hyper has left only the chunked
        // framing in it, and the verdict comes from its head.
        let r = Request::post("/")
            .header(HOST, "x")
            .header("transfer-encoding", "chunked")
            .body(())
            .unwrap();
        assert_eq!(check(&r, 16, false).map(|res| res.status().as_u16()), None);
        let refused = check(&r, 16, true).unwrap();
        assert_eq!(refused.status().as_u16(), 400);
        assert_eq!(refused.headers()["connection"], "close");
        assert_eq!(
            check(&req(Version::HTTP_11, "/", &["x"]), 16, true).map(|res| res.status().as_u16()),
            Some(400)
        );
    }
}
