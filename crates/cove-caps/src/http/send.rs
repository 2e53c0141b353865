//! Sending a checked request with ureq: one process-wide agent (its TLS
//! setup, which reads the system's CA roots, is built once), no redirects,
//! no proxy, no automatic headers, no connection reuse.

use std::io::ErrorKind;
use std::sync::{Arc, OnceLock};

use ureq::config::{AutoHeaderValue, ConfigBuilder};
use ureq::tls::{RootCerts, TlsConfig, TlsProvider};
use ureq::typestate::AgentScope;
use ureq::{Agent, Timeout};

use super::{HttpError, Kind, Prepared, Response, MAX_RESPONSE, TIMEOUT};

fn agent() -> &'static Agent {
    static AGENT: OnceLock<Agent> = OnceLock::new();
    AGENT.get_or_init(|| {
        let tls = TlsConfig::builder()
            .provider(TlsProvider::Rustls)
            // The platform's verifier: the system's CA roots (SSL_CERT_FILE
            // and SSL_CERT_DIR are honoured), as Hull's CA-bundle lookup.
            .root_certs(RootCerts::PlatformVerifier)
            .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .build();
        verbatim()
            .tls_config(tls)
            .timeout_resolve(Some(TIMEOUT))
            .timeout_connect(Some(TIMEOUT))
            .timeout_send_request(Some(TIMEOUT))
            .timeout_send_body(Some(TIMEOUT))
            .timeout_recv_response(Some(TIMEOUT))
            .timeout_recv_body(Some(TIMEOUT))
            .build()
            .new_agent()
    })
}

/// An agent that sends what it is asked and nothing else: no redirects, no
/// proxy, no headers of its own, no connection kept, every status an answer
/// (also `cove request`'s).
pub fn verbatim() -> ConfigBuilder<AgentScope> {
    Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .user_agent(AutoHeaderValue::None)
        .accept(AutoHeaderValue::None)
        .accept_encoding(AutoHeaderValue::None)
        .allow_non_standard_methods(true)
        .max_idle_connections(0)
        .max_idle_connections_per_host(0)
}

pub(super) fn send(p: Prepared) -> Result<Response, HttpError> {
    let fail = |kind, reason: String| HttpError::new(kind, p.failed, reason);
    let mut builder = ureq::http::Request::builder()
        .method(p.req.method.as_str())
        .uri(p.req.url.as_str())
        .header("connection", "close");
    for (name, value) in &p.req.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let body = p.req.body.clone().unwrap_or_default();
    let request = builder
        .body(body)
        .map_err(|e| fail(Kind::Invalid, format!("invalid request: {e}")))?;
    let mut res = agent().run(request).map_err(|e| describe(&p, e))?;
    let status = res.status().as_u16();
    let mut headers: Vec<(String, String)> = Vec::with_capacity(res.headers().len());
    for (name, value) in res.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        // `http` names are lower-case already.
        match headers.iter_mut().find(|(n, _)| n == name.as_str()) {
            Some((_, v)) => *v = value,
            None => headers.push((name.as_str().to_string(), value)),
        }
    }
    let body = res
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE)
        .read_to_vec()
        .map_err(|e| describe(&p, e))?;
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// A reason a person can act on, naming the host and port where it helps.
fn describe(p: &Prepared, e: ureq::Error) -> HttpError {
    let at = format!("{}:{}", p.target.host, p.target.port);
    let (kind, reason) = match e {
        ureq::Error::Timeout(t) => (Kind::Timeout, timeout(t, &at)),
        ureq::Error::BodyExceedsLimit(_) => (
            Kind::TooLarge,
            format!("the response body is larger than {MAX_RESPONSE} bytes"),
        ),
        ureq::Error::HostNotFound => (Kind::Network, format!("host not found ({at})")),
        ureq::Error::ConnectionFailed => (Kind::Network, format!("connection failed ({at})")),
        ureq::Error::Io(io) if tls_error(&io).is_some() => {
            let tls = tls_error(&io).map(ToString::to_string).unwrap_or_default();
            (Kind::Network, format!("TLS: {tls} ({at})"))
        }
        ureq::Error::Io(io) => match io.kind() {
            ErrorKind::ConnectionRefused => (Kind::Network, format!("connection refused ({at})")),
            ErrorKind::TimedOut | ErrorKind::WouldBlock => {
                (Kind::Timeout, format!("timed out after {TIMEOUT:?} ({at})"))
            }
            ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset => (
                Kind::Network,
                format!("the connection closed before a complete response ({at})"),
            ),
            _ => (Kind::Network, format!("{io} ({at})")),
        },
        ureq::Error::Rustls(tls) => (Kind::Network, format!("TLS: {tls} ({at})")),
        ureq::Error::Tls(tls) => (Kind::Network, format!("TLS: {tls} ({at})")),
        ureq::Error::Protocol(proto) => (
            Kind::Network,
            format!("invalid HTTP response: {proto} ({at})"),
        ),
        ureq::Error::BadUri(uri) => (Kind::Invalid, format!("invalid URL: {uri}")),
        ureq::Error::Http(http) => (Kind::Invalid, format!("invalid request: {http}")),
        other => (Kind::Network, format!("{other} ({at})")),
    };
    HttpError::new(kind, p.failed, reason)
}

/// rustls reports certificate and handshake failures inside I/O errors.
fn tls_error(io: &std::io::Error) -> Option<&rustls::Error> {
    io.get_ref()?.downcast_ref::<rustls::Error>()
}

fn timeout(t: Timeout, at: &str) -> String {
    let phase = match t {
        Timeout::Resolve => "resolving the host",
        Timeout::Connect => "connecting",
        Timeout::SendRequest | Timeout::SendBody => "sending the request",
        Timeout::RecvResponse => "waiting for the response",
        Timeout::RecvBody => "reading the response body",
        _ => "waiting",
    };
    format!("timed out after {}s {phase} ({at})", TIMEOUT.as_secs())
}
