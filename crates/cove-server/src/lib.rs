//! The HTTP layer: shared-nothing workers, one OS thread each with its own
//! current-thread tokio runtime, SO_REUSEPORT listener and app instance;
//! hyper HTTP/1.1 with keep-alive and pipelining, HTTP/2, HTTPS (tls/); graceful shutdown; and, for
//! `cove dev`, replacing every worker's handler without closing its listener;
//! the app's `static/` files; in `cove dev`, an error page for script errors.

pub mod access_log;
mod body;
mod config;
mod conn;
mod convert;
mod dev_error;
mod drain;
mod handler;
mod handover;
mod head_scan;
mod holder;
mod io;
mod listen_fds;
mod listener;
mod live;
pub mod metrics;
mod observe;
mod reject;
mod reload;
mod serve;
mod side_listener;
mod static_files;
mod timeouts;
mod tls;
mod woken;
mod worker;
mod ws;

pub use body::Body;
pub use config::{Deploy, DevErrors, FailedRequest, HttpLimits, Protocols, ServerConfig};
pub use handler::{Baseline, Handler, ScriptHandler};
pub use reload::{reloading, Reload, Reloading};
pub use serve::{check_addr, inherits_listeners, serve, serve_then, ServerError};
pub use tls::{Acme, AcmeSettings, Certs, TlsFiles, TlsSource, LETS_ENCRYPT};
pub use ws::WsLimits;
