//! The kernel sandbox of `cove serve` and of built apps (issue 38; Hull
//! §11.3), on by default on Linux, off with `--no-sandbox`. Once the app has
//! loaded, the process may read only the app directory, its own executable,
//! the CA roots and resolver files (when the manifest lists hosts) and the
//! manifest's `fs.read` paths; write only the database (and its -wal and
//! -shm) and the `fs.write` paths; connect over TCP only where the app
//! needs to; never exec or fork. See docs/security.md, "Kernel sandbox".
//!
//! Where and why, in three steps:
//! 1. [`Sandbox::start`], before anything loads: seccomp filters (TSYNC, so
//!    every thread, and inherited by later ones) deny exec, fork and raw
//!    sockets. Loading needs neither.
//! 2. [`Sandbox::enter_worker`], on each worker thread right after it has
//!    loaded the app and before it serves: the first one works out the
//!    [`Policy`] from the manifest it just read (and denies UDP when nothing
//!    resolves names); each puts its own thread in a Landlock domain.
//!    Loading reads every file the app needs under no rule, and the threads
//!    a worker starts later (its blocking pool: outbound http, password
//!    hashes, static files) are in its domain from birth.
//! 3. [`Sandbox::enter_main`], on the main thread once every worker has
//!    loaded, before the startup line: the main thread enters the same
//!    domain, asking the kernel to put every other thread in it too. With
//!    Landlock ABI 8 it does (TSYNC gives each thread a copy of this
//!    domain, replacing a worker's own, whose rules are the same); before
//!    that a domain binds only the thread that asks, and threads started
//!    earlier outside the workers (the I/O thread of PostgreSQL and Redis,
//!    the Lua watchdog) stay outside it. The log names them. Workers cannot
//!    wait for step 3 to enter (they start one after another, each once the
//!    one before has loaded, and the first serves meanwhile).

mod audit;
mod policy;
mod probe;
mod system;

mod services;

#[cfg(target_os = "linux")]
mod enforce;
#[cfg(target_os = "linux")]
mod files_ports;
#[cfg(target_os = "linux")]
mod syscalls;
#[cfg(target_os = "linux")]
mod threads;

#[cfg(target_os = "linux")]
use enforce::On;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use anyhow::Result;
use serde_json::Value;

use cove_core::log::{self, Level};

use crate::app::AppSource;
use crate::cli::ServeArgs;
use policy::{DbTarget, Facts};

fn info(msg: &str) {
    log::write(Level::Info, "[sandbox]", msg);
}

fn warn(msg: &str) {
    log::write(Level::Warn, "[sandbox]", msg);
}

/// A failure to apply a sandbox the kernel supports stops the start.
fn failed(what: &str, e: impl std::fmt::Display) -> String {
    format!("kernel sandbox: {what}: {e}; start with --no-sandbox to run without it")
}

/// The sandbox of one server start.
pub(crate) struct Sandbox {
    /// `None`: `--no-sandbox`, or not Linux.
    on: Option<On>,
    /// `--sandbox-probe`: run on the first worker and the main thread, on
    /// or off, for the tests to compare.
    probe: Vec<String>,
    /// The first worker to load sets it.
    probed: OnceLock<()>,
}

impl Sandbox {
    /// Step 1, before the app loads; logs that it is off if it is.
    pub(crate) fn start(args: &ServeArgs, app: &AppSource) -> Result<Arc<Sandbox>> {
        let on = if args.no_sandbox {
            info("kernel sandbox disabled (--no-sandbox)");
            audit::off("--no-sandbox");
            None
        } else {
            On::start(args, app)?
        };
        Ok(Arc::new(Sandbox {
            on,
            probe: args.sandbox_probe.clone(),
            probed: OnceLock::new(),
        }))
    }

    /// Step 2, on a worker thread once the app has loaded there.
    pub(crate) fn enter_worker(&self, manifest: Option<Value>) -> Result<(), String> {
        if let Some(on) = &self.on {
            on.enter_worker(manifest.as_ref())?;
        }
        if self.probed.set(()).is_ok() {
            self.run_probe();
        }
        Ok(())
    }

    /// Step 3, on the main thread once every worker has loaded.
    pub(crate) fn enter_main(&self) -> Result<(), String> {
        if let Some(on) = &self.on {
            on.enter_main()?;
        }
        self.run_probe();
        Ok(())
    }

    fn run_probe(&self) {
        if !self.probe.is_empty() {
            let who = std::thread::current().name().unwrap_or("main").to_string();
            probe::run(&self.probe, &who);
        }
    }
}

/// What the command line says the server will touch.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn facts(args: &ServeArgs, app: &AppSource) -> Result<Facts> {
    let mut found = Vec::new();
    let db = match crate::target::postgres_url(&args.db) {
        // An unreadable URL fails to connect next, with its own message.
        Some(url) => {
            found.extend(services::postgres(url).unwrap_or_default());
            DbTarget::None
        }
        None if args.db.as_os_str() == ":memory:" => DbTarget::None,
        None => DbTarget::File(args.db.clone()),
    };
    if let Some(url) = &args.kv {
        found.extend(services::redis(url).ok());
    }
    if !args.acme.is_empty() {
        found.extend(services::acme(&args.acme_dir).ok());
    }
    Ok(Facts {
        app_dir: app.dir().map(PathBuf::from),
        exe: std::env::current_exe().and_then(|p| p.canonicalize()).ok(),
        db,
        services: found,
        cwd: std::env::current_dir()?,
        tls: args.tls_cert.iter().chain(&args.tls_key).cloned().collect(),
        acme_cache: (!args.acme.is_empty()).then(|| args.acme_cache.clone()),
    })
}

/// Elsewhere the sandbox is off, and says so once.
#[cfg(not(target_os = "linux"))]
struct On;

#[cfg(not(target_os = "linux"))]
impl On {
    fn start(_: &ServeArgs, _: &AppSource) -> Result<Option<On>> {
        warn("kernel sandbox not available on this platform");
        audit::off("not available on this platform");
        Ok(None)
    }

    fn enter_worker(&self, _: Option<&Value>) -> Result<(), String> {
        Ok(())
    }

    fn enter_main(&self) -> Result<(), String> {
        Ok(())
    }
}
