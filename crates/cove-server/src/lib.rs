//! The HTTP layer: shared-nothing workers, one OS thread each with its own
//! current-thread tokio runtime, SO_REUSEPORT listener and app instance;
//! hyper HTTP/1.1 with keep-alive and pipelining; graceful shutdown; and, for
//! `cove dev`, replacing every worker's handler without closing its listener.

mod config;
mod convert;
mod handler;
mod listener;
mod reload;
mod serve;
mod worker;

pub use config::ServerConfig;
pub use handler::{Baseline, Handler, ScriptHandler};
pub use reload::{reloading, Reload, Reloading};
pub use serve::{serve, ServerError};
