//! Server mode: find the app, open and migrate the database, start workers.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use anyhow::{anyhow, Result};

use cove_core::{log, App, AppFiles, Limits};
use cove_db::{Db, WriteLock};
use cove_js::JsEngine;
use cove_lua::LuaEngine;
use cove_server::{Baseline, ScriptHandler, ServerConfig};

use crate::app::{AppSource, Runtime};
use crate::cli::{BaselineArgs, ServeArgs};

fn addr(bind: &str, port: u16) -> Result<SocketAddr> {
    let ip: IpAddr = bind.trim_matches(['[', ']']).parse().map_err(|_| {
        anyhow!("invalid bind address {bind:?} (use an IP literal such as 127.0.0.1 or ::1)")
    })?;
    Ok(SocketAddr::new(ip, port))
}

fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Apply pending migrations, logging what was applied.
pub fn migrate(db: &mut Db, files: &AppFiles) -> Result<()> {
    let report = db
        .migrate(files)
        .map_err(|e| anyhow!("migration failed: {e}; refusing to start"))?;
    for name in &report.skipped_empty {
        log::warn(&format!("migration {name} is empty; skipped"));
    }
    for name in &report.applied {
        log::info(&format!("migration applied: {name}"));
    }
    if !report.applied.is_empty() {
        log::info(&format!("applied {} migration(s)", report.applied.len()));
    }
    Ok(())
}

pub fn run(args: &ServeArgs) -> Result<()> {
    run_app(args, crate::app::locate(args.app.as_deref())?)
}

/// Serve `app` until SIGINT/SIGTERM.
pub fn run_app(args: &ServeArgs, app: AppSource) -> Result<()> {
    if let Some(level) = cove_core::log::Level::parse(&args.log_level) {
        cove_core::log::set_level(level);
    }
    cove_caps::time::start_clock();

    let lock = WriteLock::default();
    let mut main_db = Db::open(&args.db, lock.clone())
        .map_err(|e| anyhow!("cannot open database {}: {e}", args.db.display()))?;
    if !args.no_migrate {
        migrate(&mut main_db, &app.files)?;
    }
    let in_memory = args.db.as_os_str() == ":memory:";
    let workers = match args.workers {
        _ if in_memory => 1,
        Some(n) => n as usize,
        None => default_workers(),
    };
    let limits = Limits {
        max_body: args.max_body,
        max_instructions: if args.max_instructions == 0 {
            Limits::default().max_instructions
        } else {
            args.max_instructions
        },
        max_heap: args.max_heap,
        drain_timeout_ms: args.drain_timeout,
    };
    let config = ServerConfig {
        addr: addr(&args.bind, args.port)?,
        workers,
        limits: limits.clone(),
        label: app.runtime.label().to_string(),
    };
    let script = app.script_config(limits, !args.no_group_commit);
    let opener = DbOpener {
        path: args.db.clone(),
        lock,
    };
    let served = match app.runtime {
        Runtime::Js => serve_app(&config, opener, move |db| JsEngine::load(&script, db)),
        Runtime::Lua => serve_app(&config, opener, move |db| LuaEngine::load(&script, db)),
    };
    served.map_err(|e| match e {
        cove_server::ServerError::Load(msg) => anyhow!("failed to load the app: {msg}"),
        other => anyhow!(other),
    })?;
    if let Err(e) = main_db.optimize_and_checkpoint() {
        log::warn(&format!("checkpoint at shutdown failed: {e}"));
    }
    log::info("server stopped");
    Ok(())
}

/// Opens one connection per worker to the app's database.
struct DbOpener {
    path: PathBuf,
    lock: WriteLock,
}

/// Serve with `load` building the app on each worker thread.
fn serve_app<A, L>(
    config: &ServerConfig,
    db: DbOpener,
    load: L,
) -> Result<(), cove_server::ServerError>
where
    A: App + 'static,
    L: Fn(Db) -> Result<A, String> + Send + Sync + 'static,
{
    let max_body = config.limits.max_body;
    cove_server::serve(config, move |_| {
        let conn = Db::open(&db.path, db.lock.clone())
            .map_err(|e| format!("cannot open database {}: {e}", db.path.display()))?;
        Ok(ScriptHandler::new(load(conn)?, max_body))
    })
}

pub fn baseline(args: &BaselineArgs) -> Result<()> {
    let config = ServerConfig {
        addr: addr(&args.bind, args.port)?,
        workers: args.workers.unwrap_or_else(default_workers),
        limits: Limits::default(),
        label: "baseline, no script".to_string(),
    };
    cove_server::serve(&config, |_| Ok(Baseline))?;
    Ok(())
}
