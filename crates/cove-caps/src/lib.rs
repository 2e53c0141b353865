//! Capabilities written once in Rust and bound to every script runtime:
//! time, env, log, JSON encoding primitives and the app manifest.

pub mod api;
pub mod app_metrics;
pub mod cap;
pub mod crypto;
pub mod db;
pub mod env;
pub mod http;
pub mod json;
pub mod kv;
pub mod log;
pub mod manifest;
mod metrics;
pub mod pubsub;
pub mod registry;
pub mod response;
pub mod routes;
pub mod sig;
pub mod smtp;
pub mod testkit;
pub mod time;

pub use manifest::{Csp, Manifest, ManifestError};
pub use registry::{Registered, Registry};

/// State one server shares between all its workers' VMs (each worker has
/// its own VM; what must be seen by all of them lives here). Clones share.
#[derive(Debug, Clone, Default)]
pub struct Shared {
    pub kv: kv::Kv,
    /// Published messages for every worker (and, on Redis, every process).
    pub pubsub: pubsub::Hub,
}
