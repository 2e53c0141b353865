//! `cove dev`: serve the app and reload it in place whenever one of its files
//! changes, without closing the listening sockets.
//!
//! A watcher thread polls the app directory (`watch.rs`). On a change it
//! applies new migrations with the main database connection, then has every
//! worker build a new VM next to its current one; only if all of them loaded
//! the app do they switch (`cove_server::Reload`). Otherwise the error
//! (file:line) is logged and the last good version goes on serving. Each
//! new VM compiles every template of the app as it loads: one that does not
//! parse fails the reload as a broken app.lua does (rather than its first
//! request), and a VM goes on rendering the templates it was built with.
//!
//! A script error answers with an error page (`cove_server`'s `dev_error`)
//! instead of serve mode's plain `Internal Server Error`.
//!
//! What happens is also recorded for agents and tools (`events.rs`): the
//! app's `.cove/` says whether the server runs, on which port, and what
//! failed last; `--agent` prints the events on stdout.

mod events;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread;

use anyhow::{anyhow, bail, Result};

use cove_caps::Shared;
use cove_core::{log, ScriptConfig};
use cove_db::{Db, WriteLock};
use cove_js::JsEngine;
use cove_lua::LuaEngine;
use cove_server::{reloading, DevErrors, Reload};
use serde_json::json;

use crate::app::Runtime;
use crate::cli::DevArgs;
use crate::serve::{self, DbOpener};
use events::Events;
use watch::{Watcher, POLL};

pub fn run(dev_args: &DevArgs) -> Result<i32> {
    let args = &dev_args.serve;
    let app = crate::app::locate(args.app.as_deref())?;
    let Some(dir) = app.dir().map(Path::to_path_buf) else {
        bail!("cove dev reloads an app directory; this executable's built-in app has none");
    };
    if args.db.as_os_str() == ":memory:" {
        bail!(
            "cove dev needs a database file: an in-memory database would start empty at \
             every reload; use e.g. `-d dev.db`"
        );
    }
    // One dev server an app: a second would wipe the first's .cove record
    // and race it on every reload.
    if let Some(port) = crate::agent::state::listening_port(&dir) {
        bail!(
            "cove dev is already running for {} (port {port}; `cove status` shows it); \
             stop it first, or use that one",
            dir.display()
        );
    }
    serve::init(args);
    if dev_args.stop_with_parent {
        stop_with_parent()?;
    }
    let events = Arc::new(Events::start(&dir, dev_args.agent));
    let tee = events.clone();
    log::tee(move |level, tag, message| {
        let source = tag.trim_start_matches('[').trim_end_matches(']');
        let fields = json!({ "level": level.name(), "source": source, "message": message });
        tee.emit("log", fields);
    });
    let mut config = serve::server_config(args, &app)?;
    let told = events.clone();
    config.dev_errors = Some(DevErrors {
        files: app.files.clone(),
        notify: Some(Arc::new(move |failed| told.request_failed(failed))),
    });
    // Before the database: a server that cannot listen leaves none behind.
    cove_server::check_addr(config.addr)?;
    serve::start_observers(args, &mut config)?;
    let lock = WriteLock::default();
    let main_db = serve::open_main_db(args, &lock)?;
    // Group commit stays off in dev mode. During a reload a worker thread has
    // two VMs, each with its own connection: the new one loads the app (which
    // may write) and requests already running finish on the old one. A write
    // group one of them held open across an event-loop turn would block the
    // other's write on the shared write lock forever, on the very thread that
    // would commit it.
    let script = app.script_config(config.limits.clone(), false);
    let mut dev = Dev {
        runtime: app.runtime,
        script: script.clone(),
        db: args.db.clone(),
        lock: lock.clone(),
        main_db,
        migrate: !args.no_migrate,
        watcher: Watcher::new(&dir, &args.db),
        events: events.clone(),
    };
    dev.first_load();
    log::info(&format!(
        "dev mode: watching {} for changes",
        dev.watcher.dir().display()
    ));

    let reload = Reload::new(config.workers);
    let watching = Watching::start(dev, reload.clone())?;
    // Kept across reloads: an edit does not reset rate limits or counters.
    let shared = serve::shared_state(args)?;
    let opener = DbOpener {
        path: args.db.clone(),
        lock,
        files: app.files.clone(),
        pubsub: shared.pubsub.clone(),
    };
    let db_file = match crate::target::postgres_url(&args.db) {
        Some(_) => None,
        None => std::fs::canonicalize(&args.db).ok(),
    };
    let listening = |addr| {
        events.started(addr, app.runtime.name(), &app.entry, db_file.as_deref());
        Ok(())
    };
    let served = match app.runtime {
        Runtime::Js => {
            let load = move |db| {
                let app = JsEngine::load(&script, db, &shared)?;
                templates(app.engine.compile_templates(&script.files))?;
                Ok(app)
            };
            let handlers = reloading(reload.clone(), opener.handlers(load, &config));
            cove_server::serve_then(&config, handlers, listening)
        }
        Runtime::Lua => {
            let load = move |db| {
                let app = LuaEngine::load(&script, db, &shared)?;
                templates(app.engine.compile_templates(&script.files))?;
                Ok(app)
            };
            let handlers = reloading(reload.clone(), opener.handlers(load, &config));
            cove_server::serve_then(&config, handlers, listening)
        }
    };
    events.stopped();
    // The workers are gone: a reload waiting for them must not wait on.
    reload.stop();
    let main_db = watching.finish()?;
    served.map_err(serve::load_failed)?;
    serve::shut_down(main_db);
    Ok(0)
}

/// SIGTERM this process (a clean stop) once its parent has exited: polled,
/// as a parent's SIGKILL leaves nothing else to notice.
fn stop_with_parent() -> Result<()> {
    use rustix::process::{getpid, getppid, kill_process, Signal};
    let parent = getppid();
    thread::Builder::new()
        .name("cove-dev-parent".into())
        .spawn(move || {
            while getppid() == parent {
                thread::sleep(POLL);
            }
            log::info("the process that started cove dev exited; stopping");
            let _ = kill_process(getpid(), Signal::TERM);
        })?;
    Ok(())
}

/// The watcher thread, running [`Dev::watch`] until `finish`.
struct Watching {
    stop: mpsc::Sender<()>,
    thread: thread::JoinHandle<Db>,
}

impl Watching {
    fn start(dev: Dev, reload: Reload) -> Result<Watching> {
        let (stop, stopped) = mpsc::channel();
        let thread = thread::Builder::new()
            .name("cove-dev-watch".into())
            .spawn(move || dev.watch(&reload, &stopped))?;
        Ok(Watching { stop, thread })
    }

    /// Stop watching; the main database connection comes back.
    fn finish(self) -> Result<Db> {
        drop(self.stop);
        self.thread
            .join()
            .map_err(|_| anyhow!("the file watcher thread panicked"))
    }
}

/// The watcher thread's state.
struct Dev {
    runtime: Runtime,
    script: ScriptConfig,
    db: PathBuf,
    lock: WriteLock,
    /// Applies migrations; checkpoints at shutdown (given back by `watch`).
    main_db: Db,
    migrate: bool,
    watcher: Watcher,
    events: Arc<Events>,
}

impl Dev {
    /// Until the app loads: a broken app at start is reported and waited
    /// for, as a broken edit later is. The workers load it again.
    fn first_load(&mut self) {
        while let Err(msg) = self.migrate().and_then(|()| self.test_load()) {
            log::error(&format!("{msg} (fix it and save; cove dev retries then)"));
            self.events.load_failed(&msg, true);
            while self.watcher.changed().is_empty() && !self.events.reload_requested() {
                thread::sleep(POLL);
            }
        }
        self.events.loaded();
    }

    /// Poll for changes until `stop` is dropped; hands back the main database
    /// connection for the shutdown checkpoint.
    fn watch(mut self, reload: &Reload, stop: &mpsc::Receiver<()>) -> Db {
        while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(POLL) {
            let changed = self.watcher.changed();
            let requested = self.events.reload_requested();
            if changed.is_empty() && !requested {
                continue;
            }
            match self.migrate().and_then(|()| reload.reload()) {
                Ok(()) => {
                    let why = match changed.is_empty() {
                        true => "requested".to_string(),
                        false => describe(&changed),
                    };
                    log::info(&format!("reloaded ({why})"));
                    self.events.loaded();
                    let fields = json!({ "files": changed, "requested": requested });
                    self.events.emit("reloaded", fields);
                }
                Err(msg) => {
                    log::error(&format!(
                        "reload failed: {msg} (still serving the previous version; fix it and save)"
                    ));
                    self.events.load_failed(&msg, false);
                }
            }
        }
        self.main_db
    }

    /// Apply new migrations, before the app that may need them loads.
    fn migrate(&mut self) -> Result<(), String> {
        if !self.migrate {
            return Ok(());
        }
        let applied = serve::apply_migrations(&mut self.main_db, &self.script.files)
            .map_err(|e| format!("{e:#}"))?;
        if !applied.is_empty() {
            self.events.emit("migrated", json!({ "applied": applied }));
        }
        Ok(())
    }

    /// Load the app once in a fresh VM, as a worker will, templates included.
    fn test_load(&self) -> Result<(), String> {
        let conn = crate::target::open(&self.db, &self.lock)?;
        let (script, shared) = (&self.script, &Shared::default());
        templates(match self.runtime {
            Runtime::Js => JsEngine::load(script, conn, shared)?
                .engine
                .compile_templates(&script.files),
            Runtime::Lua => LuaEngine::load(script, conn, shared)?
                .engine
                .compile_templates(&script.files),
        })
    }
}

/// The outcome of compiling every template, as a load error: each broken
/// template as `templates/x.html:3:14: message`, joined by `; `.
fn templates(compiled: Result<usize, Vec<cove_template::Error>>) -> Result<(), String> {
    compiled.map(drop).map_err(|errors| {
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        shown.join("; ")
    })
}

/// `2 files changed: app.lua, lib.lua`, naming at most three.
fn describe(changed: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut names = changed[..changed.len().min(SHOWN)].join(", ");
    if changed.len() > SHOWN {
        names.push_str(", …");
    }
    let files = if changed.len() == 1 { "file" } else { "files" };
    format!("{} {files} changed: {names}", changed.len())
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn describes_changes() {
        let names = |n: usize| (1..=n).map(|i| format!("f{i}")).collect::<Vec<_>>();
        assert_eq!(describe(&names(1)), "1 file changed: f1");
        assert_eq!(describe(&names(3)), "3 files changed: f1, f2, f3");
        assert_eq!(describe(&names(5)), "5 files changed: f1, f2, f3, …");
    }
}
