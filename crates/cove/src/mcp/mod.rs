//! `cove mcp`: the app's development tools for a coding agent, over the
//! Model Context Protocol (the official Rust SDK, rmcp): its routes, schema
//! and data, requests through the dev server, tests, the dev server's
//! events and errors, reloads and migrations; the API reference and the
//! app's files as resources. stdio by default, streamable HTTP with --http.
//!
//! The tools work against a `cove dev` server: the app's running one, or
//! one started here and stopped when the session ends (`dev_link`).

mod dev_link;
mod events;
mod http;
mod resources;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool_handler, ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use crate::cli::McpArgs;
use dev_link::DevLink;

/// What every session's tools share.
pub struct Ctx {
    /// The app directory (canonical).
    pub dir: PathBuf,
    /// The dev server's database file.
    pub db: PathBuf,
    pub allow_writes: bool,
    pub link: Mutex<DevLink>,
}

impl Ctx {
    /// The database file for `schema` and `query`, once the dev server has
    /// created it (before, they read the migrations into memory).
    fn db_file(&self) -> Option<&Path> {
        Some(self.db.as_path()).filter(|p| p.is_file() || crate::target::postgres_url(p).is_some())
    }

    /// The dev server link; a tool that panicked holding it leaves it usable
    /// (it holds no invariant a panic could break).
    fn link(&self) -> std::sync::MutexGuard<'_, DevLink> {
        self.link.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One MCP session's handler.
#[derive(Clone)]
pub struct CoveMcp {
    ctx: Arc<Ctx>,
    tool_router: ToolRouter<Self>,
}

impl CoveMcp {
    fn new(ctx: Arc<Ctx>) -> CoveMcp {
        CoveMcp {
            ctx,
            tool_router: Self::tool_router(),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for CoveMcp {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        ServerConfig::new(caps)
            .with_server_info(Implementation::new("cove", crate::cli::VERSION))
            .with_instructions(format!(
                "Tools for the Cove app in {}: routes, schema, query, request (through its \
                 `cove dev` server), run_tests, logs, errors, reload, migrate, status. \
                 Resources: the API reference (cove://docs/api/…) and the app's files \
                 (cove://app/…).",
                self.ctx.dir.display()
            ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let dir = self.ctx.dir.clone();
        tokio::task::spawn_blocking(move || resources::list(&dir))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let dir = self.ctx.dir.clone();
        tokio::task::spawn_blocking(move || resources::read(&dir, &request.uri))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?
            .map(Into::into)
    }
}

pub fn run(args: &McpArgs) -> Result<i32> {
    // An entry file names its directory, as for `cove status`.
    let dir = crate::agent::app_dir(args.app.as_deref());
    if !dir.is_dir() {
        bail!("{}: no such app directory", dir.display());
    }
    if crate::app::entries_in(&dir).is_empty() {
        bail!(
            "{}: no app here ({}); give the app directory: `cove mcp path/to/app`",
            dir.display(),
            crate::app::ENTRY_NAMES
        );
    }
    if let Some(addr) = args.http.filter(|a| !a.ip().is_loopback()) {
        bail!(
            "--http {addr}: the MCP endpoint has no authentication and can run SQL and \
             requests, so it listens on loopback only (e.g. --http 127.0.0.1:8765); reach it \
             from elsewhere through an SSH tunnel"
        );
    }
    // Attached, the running server's database file (dev.json names it; not a
    // PostgreSQL URL, whose password stays out of files).
    let running_db = crate::agent::state::listening_port(&dir)
        .and_then(|_| crate::agent::state::dev_json(&dir))
        .and_then(|dev| dev["db"].as_str().map(PathBuf::from));
    let db = (args.db.clone().or(running_db)).unwrap_or_else(|| dir.join("data.db"));
    let link = DevLink::attach_or_start(&dir, args.port, &db)?;
    let ctx = Arc::new(Ctx {
        dir,
        db,
        allow_writes: args.allow_writes,
        link: Mutex::new(link),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let served = runtime.block_on(async {
        match args.http {
            Some(addr) => http::serve(addr, ctx.clone()).await,
            None => serve_stdio(ctx.clone()).await,
        }
    });
    // Blocking tool calls still running must not outlive the dev server.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    ctx.link().stop();
    served.map(|()| 0)
}

async fn serve_stdio(ctx: Arc<Ctx>) -> Result<()> {
    let service = CoveMcp::new(ctx)
        .serve(rmcp::transport::stdio())
        .await
        .context("starting the MCP session on stdio")?;
    tokio::select! {
        ended = service.waiting() => { ended?; }
        () = shutdown_signal() => {}
    }
    Ok(())
}

/// SIGINT or SIGTERM: end the session so the dev server started here stops too.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
