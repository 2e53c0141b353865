//! The HTTP layer: shared-nothing workers, one OS thread each with its own
//! current-thread tokio runtime, SO_REUSEPORT listener and app instance;
//! hyper HTTP/1.1 with keep-alive and pipelining; graceful shutdown.

mod config;
mod convert;
mod handler;
mod listener;
mod serve;
mod worker;

pub use config::ServerConfig;
pub use handler::{Baseline, Handler, ScriptHandler};
pub use serve::{serve, ServerError};
