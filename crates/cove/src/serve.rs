//! Server mode: find the app, open and migrate the database, start workers.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Result};

use cove_caps::pubsub::Hub;
use cove_caps::Shared;
use cove_core::{log, App, AppFiles, Limits};
use cove_db::{Db, WriteLock};
use cove_js::JsEngine;
use cove_lua::LuaEngine;
use cove_server::{
    reloading, Acme, AcmeSettings, Baseline, Certs, Protocols, Reload, ScriptHandler, ServerConfig,
    TlsFiles, TlsSource,
};

use crate::app::{AppSource, Runtime};
use crate::cli::{BaselineArgs, ServeArgs};
use crate::scratch::{self, Check};

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
    let applied = apply_migrations(db, files).map_err(|e| anyhow!("{e}; refusing to start"))?;
    cove_db::count_migrations(applied.len());
    Ok(())
}

/// Apply pending migrations, logging what was applied; the error names the
/// migration that failed. Returns the names of those applied.
pub(crate) fn apply_migrations(db: &mut Db, files: &AppFiles) -> Result<Vec<String>> {
    let report = db
        .migrate(files)
        .map_err(|e| anyhow!("migration failed: {e}"))?;
    for name in &report.skipped_empty {
        log::warn(&format!("migration {name} is empty; skipped"));
    }
    for name in &report.applied {
        log::info(&format!("migration applied: {name}"));
    }
    if !report.applied.is_empty() {
        log::info(&format!("applied {} migration(s)", report.applied.len()));
    }
    Ok(report.applied)
}

pub fn run(args: &ServeArgs) -> Result<()> {
    run_app(args, crate::app::locate(args.app.as_deref())?)
}

/// Process-wide settings every serving mode applies first.
pub(crate) fn init(args: &ServeArgs) {
    if let Some(level) = cove_core::log::Level::parse(&args.log_level) {
        cove_core::log::set_level(level);
    }
    cove_caps::time::start_clock();
    if args.audit || cove_core::audit::hull_env_asks() {
        cove_core::audit::enable();
    }
}

/// The connection the main thread keeps: migrations, then the checkpoint at exit.
pub(crate) fn open_main_db(args: &ServeArgs, lock: &WriteLock) -> Result<Db> {
    crate::target::open(&args.db, lock).map_err(|e| anyhow!(e))
}

/// The kv store every worker shares: in this process, or on Redis (`--kv`)
/// for every process of a deployment.
pub(crate) fn shared_state(args: &ServeArgs) -> Result<Shared> {
    let (kv, pubsub) = match &args.kv {
        None => (cove_caps::kv::Kv::local(), Hub::local()),
        Some(url) => {
            let kv = cove_caps::kv::Kv::connect(url).map_err(|e| anyhow!(e))?;
            // Published messages reach the other processes through it too.
            let pubsub = Hub::connect(url).map_err(|e| anyhow!(e))?;
            log::info(&format!(
                "kv store and pub/sub: {}",
                cove_core::redact_url(url)
            ));
            (kv, pubsub)
        }
    };
    Ok(Shared { kv, pubsub })
}

/// Serve `app` until SIGINT/SIGTERM.
/// `--metrics` and `--access-log`: the metrics listener and the access
/// log's file and writer, each on a thread of its own started before the
/// sandbox, which they stay outside of (Landlock restricts the thread that
/// enters it and the threads it starts later): the writer can reopen its
/// path after a rotation.
pub(crate) fn start_observers(
    args: &ServeArgs,
    config: &mut cove_server::ServerConfig,
) -> Result<()> {
    if let Some(at) = args.metrics {
        cove_server::metrics::start(at, config.addr)?;
    }
    if let Some(target) = &args.access_log {
        let log = cove_server::access_log::AccessLog::open(target.clone(), args.access_log_format)
            .map_err(|e| anyhow!("--access-log {target}: {e}"))?;
        config.access_log = Some(log);
    }
    Ok(())
}

pub fn run_app(args: &ServeArgs, app: AppSource) -> Result<()> {
    run_verified(args, app, None)
}

/// [`run_app`]; with `signed` (`--verify-sig`), each worker's app must
/// declare the signed manifest as it loads, or the server does not start.
pub fn run_verified(
    args: &ServeArgs,
    app: AppSource,
    signed: Option<crate::sign::SignedManifest>,
) -> Result<()> {
    init(args);
    let mut config = server_config(args, &app)?;
    // Before the database: a server that cannot listen leaves none behind.
    // Sockets handed over (--takeover, systemd) listen already.
    if !cove_server::inherits_listeners(&config.deploy) {
        cove_server::check_addr(config.addr)?;
    }
    start_observers(args, &mut config)?;
    // The kernel sandbox, before anything loads: no exec or fork from here.
    let sandbox = crate::sandbox::Sandbox::start(args, &app)?;
    // And the app must load before its database is created or migrated.
    let check = Check::for_args(args);
    let migrate_db = !args.no_migrate;
    if matches!(check, Check::NewFile) {
        scratch::check_loads(&app, &config.limits, migrate_db, true)?;
    }
    let lock = WriteLock::default();
    let mut main_db = open_main_db(args, &lock)?;
    if crate::target::postgres_url(&args.db).is_some() {
        log::info(&format!("database: {}", crate::target::shown(&args.db)));
    }
    if matches!(check, Check::IfPending) && scratch::pending(&mut main_db, &app.files) > 0 {
        scratch::check_loads(&app, &config.limits, true, false)?;
    }
    if migrate_db {
        migrate(&mut main_db, &app.files)?;
    }
    // SIGHUP: migrations first, then the new version on every worker or on none.
    let reload = Reload::new(config.workers);
    let main_db = Arc::new(Mutex::new(Some(main_db)));
    config.deploy.on_hangup = Some({
        let (reload, main_db, files) = (reload.clone(), main_db.clone(), app.files.clone());
        Arc::new(move || {
            if migrate_db {
                let mut db = main_db.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(db) = db.as_mut() {
                    apply_migrations(db, &files).map_err(|e| format!("{e:#}"))?;
                }
            }
            reload.reload()
        })
    });
    let script = app.script_config(config.limits.clone(), !args.no_group_commit);
    // One store for every worker's VM: rate limits and counters are per
    // server, or per deployment on Redis.
    let shared = shared_state(args)?;
    let opener = DbOpener {
        path: args.db.clone(),
        lock,
        files: app.files.clone(),
        pubsub: shared.pubsub.clone(),
    };
    let check = move |declared| signed.as_ref().map_or(Ok(()), |s| s.check(declared));
    // Then each worker, once its app has loaded, enters the sandbox. A
    // reload (SIGHUP) loads again on a worker that has entered it: the
    // policy made from the first manifest stays, so the manifest may not change.
    let worker_sandbox = sandbox.clone();
    let first_manifest = std::sync::OnceLock::new();
    let check = move |declared: Option<serde_json::Value>| {
        check(declared.clone())?;
        if first_manifest.get_or_init(|| declared.clone()) != &declared {
            return Err(
                "the app's manifest changed: the sandbox's policy was made from the \
                        one it declared at start; start a new process (--takeover) to apply it"
                    .to_string(),
            );
        }
        if ENTERED.with(|e| e.replace(true)) {
            return Ok(());
        }
        worker_sandbox.enter_worker(declared)
    };
    // And the main thread, once they all have.
    let ready = |_| sandbox.enter_main();
    let served = match app.runtime {
        Runtime::Js => cove_server::serve_then(
            &config,
            reloading(
                reload.clone(),
                opener.handlers(
                    move |db| {
                        let app = JsEngine::load(&script, db, &shared)?;
                        check(app.engine.manifest()).map(|()| app)
                    },
                    &config,
                ),
            ),
            ready,
        ),
        Runtime::Lua => cove_server::serve_then(
            &config,
            reloading(
                reload.clone(),
                opener.handlers(
                    move |db| {
                        let app = LuaEngine::load(&script, db, &shared)?;
                        check(app.engine.manifest()).map(|()| app)
                    },
                    &config,
                ),
            ),
            ready,
        ),
    };
    // The workers are gone: a reload waiting for them must not wait on.
    reload.stop();
    served.map_err(load_failed)?;
    let main_db = main_db.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(main_db) = main_db {
        shut_down(main_db);
    }
    Ok(())
}

thread_local! {
    /// This worker thread has entered the kernel sandbox (once is enough).
    static ENTERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How a server error reads to the user.
pub(crate) fn load_failed(e: cove_server::ServerError) -> anyhow::Error {
    match e {
        cove_server::ServerError::Load(msg) => anyhow!("failed to load the app: {msg}"),
        other => anyhow!(other),
    }
}

/// After the workers have drained: leave the database small and checkpointed.
pub(crate) fn shut_down(mut main_db: Db) {
    if let Err(e) = main_db.optimize_and_checkpoint() {
        log::warn(&format!("checkpoint at shutdown failed: {e}"));
    }
    log::info("server stopped");
}

/// Address, workers and limits from the command line.
pub(crate) fn server_config(args: &ServeArgs, app: &AppSource) -> Result<ServerConfig> {
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
    Ok(ServerConfig {
        addr: addr(&args.bind, args.port)?,
        workers,
        limits,
        http: cove_server::HttpLimits {
            max_header: args.max_header,
            max_url: args.max_url,
            header_timeout: std::time::Duration::from_millis(args.header_timeout),
            idle_timeout: std::time::Duration::from_millis(args.idle_timeout),
            h2_max_streams: args.h2_max_streams,
        },
        label: app.runtime.label().to_string(),
        dev_errors: None,
        protocols: protocols(args)?,
        ws: cove_server::WsLimits {
            max_message: args.ws_max_message,
            max_frame: args.ws_max_message,
            ..Default::default()
        },
        deploy: cove_server::Deploy {
            on_hangup: None,
            // The new process listens where it took over from, for the next deploy.
            offer_at: args
                .takeover_socket
                .clone()
                .or_else(|| args.takeover.clone()),
            take_over: args.takeover.clone(),
        },
        access_log: None,
    })
}

/// HTTPS, HTTP/2 and the redirect from the command line; the certificate is
/// read now, so a bad one stops the start with its file named.
fn protocols(args: &ServeArgs) -> Result<Protocols> {
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(TlsSource::Files(Arc::new(
            Certs::open(TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            })
            .map_err(|e| anyhow!(e))?,
        ))),
        _ if !args.acme.is_empty() => Some(TlsSource::Acme(Arc::new(
            Acme::new(&AcmeSettings {
                domains: args.acme.clone(),
                email: args.acme_email.clone(),
                directory: args.acme_dir.clone(),
                cache: args.acme_cache.clone(),
                directory_ca: args.acme_ca.clone(),
            })
            .map_err(|e| anyhow!(e))?,
        ))),
        _ => None,
    };
    if args.redirect_http.is_some() && tls.is_none() {
        return Err(anyhow!(
            "--redirect-http redirects to HTTPS: it needs --tls-cert and --tls-key, or --acme"
        ));
    }
    Ok(Protocols {
        tls,
        h2c: args.h2c,
        redirect_http: args.redirect_http,
    })
}

/// Opens one connection per worker to the app's database (SQLite file or PostgreSQL).
pub(crate) struct DbOpener {
    pub path: PathBuf,
    pub lock: WriteLock,
    /// The app's files, for its `static/` directory.
    pub files: AppFiles,
    /// Published messages, for the workers' event streams.
    pub pubsub: Hub,
}

impl DbOpener {
    /// The per-worker handler factory for `cove_server::serve`: a connection
    /// of its own, and `load` building the app with it on the worker thread,
    /// served as `config` says.
    pub fn handlers<A, L>(
        self,
        load: L,
        config: &ServerConfig,
    ) -> impl Fn(usize) -> Result<ScriptHandler<A>, String> + Send + Sync + 'static
    where
        A: App + 'static,
        L: Fn(Db) -> Result<A, String> + Send + Sync + 'static,
    {
        let config = config.clone();
        move |worker| {
            // Its audit lines, load-time ones too, name the worker.
            cove_core::audit::set_worker(worker);
            let conn = crate::target::open(&self.path, &self.lock)?;
            Ok(ScriptHandler::new(load(conn)?, &config)
                .with_static_files(self.files.clone())
                .with_pubsub(self.pubsub.feed(), self.pubsub.publisher()))
        }
    }
}

pub fn baseline(args: &BaselineArgs) -> Result<()> {
    let config = ServerConfig {
        addr: addr(&args.bind, args.port)?,
        workers: args.workers.unwrap_or_else(default_workers),
        limits: Limits::default(),
        http: cove_server::HttpLimits::default(),
        label: "baseline, no script".to_string(),
        dev_errors: None,
        protocols: Protocols::default(),
        ws: Default::default(),
        deploy: Default::default(),
        access_log: None,
    };
    cove_server::serve(&config, |_| Ok(Baseline))?;
    Ok(())
}
