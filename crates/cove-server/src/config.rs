use std::net::SocketAddr;

use cove_core::Limits;

/// How to listen and how many workers to run.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    pub workers: usize,
    pub limits: Limits,
    /// Shown in the startup line, e.g. "Lua runtime".
    pub label: String,
}
