use std::net::SocketAddr;

use cove_core::{AppFiles, Limits};

/// How to listen and how many workers to run.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    pub workers: usize,
    pub limits: Limits,
    /// Shown in the startup line, e.g. "Lua runtime".
    pub label: String,
    /// `cove dev` only: a script error answers with a page that shows it
    /// and the app's source around it, read from these files
    /// (`crate::dev_error`). `None`, as in serve mode and built apps, keeps
    /// the plain `Internal Server Error`.
    pub dev_errors: Option<AppFiles>,
}
