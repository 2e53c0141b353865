use std::net::SocketAddr;
use std::time::Duration;

use cove_core::{AppFiles, Limits};

/// How to listen and how many workers to run.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    pub workers: usize,
    pub limits: Limits,
    /// What a client may send and how slowly.
    pub http: HttpLimits,
    /// Shown in the startup line, e.g. "Lua runtime".
    pub label: String,
    /// `cove dev` only: a script error answers with a page that shows it
    /// and the app's source around it (`crate::dev_error`). `None`, as in
    /// serve mode and built apps, keeps the plain `Internal Server Error`.
    pub dev_errors: Option<DevErrors>,
    /// HTTPS, HTTP/2 and the HTTP redirect (docs/protocols.md).
    pub protocols: Protocols,
    /// WebSocket connections' limits (docs/protocols.md).
    pub ws: crate::WsLimits,
    /// SIGHUP reloads and takeovers (docs/operations.md, "Deploys").
    pub deploy: Deploy,
    /// `--access-log`: one line per request (docs/operations.md).
    pub access_log: Option<crate::access_log::AccessLog>,
}

/// `cove dev`'s error pages.
#[derive(Clone)]
pub struct DevErrors {
    /// The app's files, where the page reads the source around the error.
    pub files: AppFiles,
    /// Told of every request a script error failed (`cove dev --agent`'s
    /// `request_error` events), on the worker, before the page is made.
    pub notify: Option<NotifyFailed>,
}

/// See [`DevErrors::notify`].
pub type NotifyFailed = std::sync::Arc<dyn Fn(&FailedRequest<'_>) + Send + Sync>;

impl DevErrors {
    pub fn new(files: AppFiles) -> DevErrors {
        DevErrors {
            files,
            notify: None,
        }
    }
}

impl std::fmt::Debug for DevErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevErrors")
            .field("files", &self.files)
            .field("notify", &self.notify.is_some())
            .finish()
    }
}

/// A request that failed in a script, as `cove dev` reports it.
pub struct FailedRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub status: u16,
    /// The whole error, as the log has it.
    pub error: &'a str,
    /// What it says after the places it names.
    pub message: &'a str,
    /// Where it happened: the innermost place of the app's files it names.
    pub at: Option<&'a cove_core::location::Location>,
}

/// How a new version replaces the running one.
#[derive(Clone, Default)]
pub struct Deploy {
    /// Run on SIGHUP, on a thread of its own: load the new version on every
    /// worker (`crate::Reload`), or keep the old one and return the error.
    pub on_hangup: Option<std::sync::Arc<dyn Fn() -> Result<(), String> + Send + Sync>>,
    /// Take the listening sockets over from the server listening for a
    /// takeover at this path, instead of binding (`--takeover`).
    pub take_over: Option<std::path::PathBuf>,
    /// Listen here for the next process to take over (`--takeover-socket`).
    pub offer_at: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Deploy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deploy")
            .field("on_hangup", &self.on_hangup.is_some())
            .field("take_over", &self.take_over)
            .field("offer_at", &self.offer_at)
            .finish()
    }
}

/// What the listeners speak besides plain HTTP/1.1.
#[derive(Debug, Clone, Default)]
pub struct Protocols {
    /// Serve HTTPS with these certificates, HTTP/2 or HTTP/1.1 by ALPN.
    pub tls: Option<crate::tls::TlsSource>,
    /// On a plain port, also HTTP/2 for clients that start with its
    /// preface ("prior knowledge", h2c).
    pub h2c: bool,
    /// With `tls`: answer plain HTTP on this port with a 308 to HTTPS.
    pub redirect_http: Option<u16>,
}

/// The HTTP/1.1 limits and timeouts (docs/security.md, "HTTP limits and
/// timeouts"); the defaults are those of `cove --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Largest request head (request line and headers), in bytes: above it
    /// the answer is 431 and the connection is closed.
    pub max_header: usize,
    /// Longest request target (path and query), in bytes: above it, 414.
    pub max_url: usize,
    /// Time a client has to send a whole request head, counted from when
    /// it connected (first request) or from the first byte of a later
    /// request: then 408, or a plain close if it sent nothing at all.
    pub header_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request, or a
    /// response wait for the client to read any of it, before it is closed.
    pub idle_timeout: Duration,
    /// HTTP/2: requests one connection may have in progress at once.
    pub h2_max_streams: u32,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_header: 64 * 1024,
            max_url: 8 * 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            h2_max_streams: 100,
        }
    }
}
