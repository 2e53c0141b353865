//! Starts the workers one after another (so app load-time side effects such
//! as seeding never race), then waits for SIGINT/SIGTERM and drains.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

use cove_core::log;

use crate::{handover, listener, tls, worker, Handler, ServerConfig};

/// How often the certificate files are checked for a change.
const CERT_RECHECK: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    // `error` is shown, not chained as a source: the message says it once.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        addr: SocketAddr,
        error: std::io::Error,
    },
    /// The app failed to load on a worker; the message names file and line.
    #[error("{0}")]
    Load(String),
    /// The `ready` step of [`serve_then`] failed.
    #[error("{0}")]
    Ready(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Fails when another process listens on `addr` already (see
/// [`serve`], which refuses it too): callers check before doing work that a
/// server that cannot start should not leave behind (creating a database).
pub fn check_addr(addr: SocketAddr) -> Result<(), ServerError> {
    if addr.port() == 0 {
        return Ok(());
    }
    listener::refuse_if_taken(addr).map_err(|error| ServerError::Bind { addr, error })
}

/// Serve until SIGINT/SIGTERM. `make` builds the handler on each worker
/// thread (script VMs cannot move between threads).
pub fn serve<H, F>(config: &ServerConfig, make: F) -> Result<(), ServerError>
where
    H: Handler,
    F: Fn(usize) -> Result<H, String> + Send + Sync + 'static,
{
    serve_then(config, make, |_| Ok(()))
}

/// [`serve`], running `ready` with the address listened on, on the calling
/// thread once every worker has built its handler, before the startup line
/// (the kernel sandbox's last step; `cove dev`'s `.cove/dev.json`). If it
/// fails, the workers stop and so does the server.
pub fn serve_then<H, F, R>(config: &ServerConfig, make: F, ready: R) -> Result<(), ServerError>
where
    H: Handler,
    F: Fn(usize) -> Result<H, String> + Send + Sync + 'static,
    R: FnOnce(SocketAddr) -> Result<(), String>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // SIGHUP reloads certificate files and the app; with neither it keeps
    // its default (the server stops, as before).
    let reloads_files = matches!(config.protocols.tls, Some(tls::TlsSource::Files(_)))
        || config.deploy.on_hangup.is_some();
    let (mut sigint, mut sigterm, mut sighup) = rt.block_on(async {
        Ok::<_, std::io::Error>((
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
            match reloads_files {
                true => Some(signal(SignalKind::hangup())?),
                false => None,
            },
        ))
    })?;
    // SIGUSR1 reopens the access log (logrotate), registered before the
    // workers start so that it never ends the process.
    let reopen_log = match &config.access_log {
        Some(log) => Some(rt.block_on(async { log.reopen_on_sigusr1() })?),
        None => None,
    };
    let bind_error = |error| ServerError::Bind {
        addr: config.addr,
        error,
    };
    let (listeners, incoming) = acquire(config).map_err(bind_error)?;
    let local = listeners[0].local_addr()?;
    let workers_n = listeners.len();
    // Kept to hand on to the next process (`--takeover-socket`).
    let offer = match &config.deploy.offer_at {
        Some(path) if incoming.is_none() => Some(handover::Offer::bind(path)?),
        _ => None,
    };
    let handed = listeners
        .iter()
        .map(|l| l.try_clone().map(std::os::fd::OwnedFd::from))
        .collect::<std::io::Result<Vec<_>>>()?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let drain = Duration::from_millis(config.limits.drain_timeout_ms);
    let http = config.http;
    let protocols = config.protocols.clone();
    let redirect = match (&protocols.tls, protocols.redirect_http) {
        (Some(_), Some(port)) => {
            let at = SocketAddr::new(config.addr.ip(), port);
            check_addr(at)?;
            Some(listener::bind(at).map_err(|error| ServerError::Bind { addr: at, error })?)
        }
        _ => None,
    };
    let make = Arc::new(make);
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    for (i, l) in listeners.into_iter().enumerate() {
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let make = make.clone();
        let stop = stop_rx.clone();
        let protocols = protocols.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("cove-worker-{i}"))
            .spawn(move || match make(i) {
                Ok(handler) => {
                    let _ = ready_tx.send(Ok(()));
                    if let Err(e) = worker::run(handler, l, stop, http, protocols, drain) {
                        log::error(&format!("worker {i} stopped: {e}"));
                    }
                }
                Err(msg) => {
                    let _ = ready_tx.send(Err(msg));
                }
            })?;
        workers.push(spawned);
        let ready = ready_rx
            .recv()
            .unwrap_or_else(|_| Err(format!("worker {i} died while loading the app")));
        if let Err(msg) = ready {
            let _ = stop_tx.send(true);
            join_all(workers);
            return Err(ServerError::Load(msg));
        }
    }
    // Every worker serves: the old server may stop now, and the path is ours.
    let offer = match incoming {
        Some(incoming) => {
            if let Err(e) = incoming.finish() {
                let _ = stop_tx.send(true);
                join_all(workers);
                return Err(ServerError::Io(e));
            }
            log::info("took over the listening sockets; the previous server drains");
            // Serving already: a path that cannot be listened on only
            // means no takeover from this process.
            match config.deploy.offer_at.as_deref().map(handover::Offer::bind) {
                Some(Ok(offer)) => Some(offer),
                Some(Err(e)) => {
                    log::error(&format!("{e}; this server cannot be taken over"));
                    None
                }
                None => None,
            }
        }
        None => offer,
    };
    if let Err(msg) = ready(local) {
        let _ = stop_tx.send(true);
        join_all(workers);
        return Err(ServerError::Ready(msg));
    }
    let scheme = if protocols.tls.is_some() {
        "https"
    } else {
        "http"
    };
    log::info(&format!(
        "listening on {scheme}://{local} ({}, {} worker{})",
        config.label,
        workers_n,
        if workers_n == 1 { "" } else { "s" }
    ));
    let (taken_tx, taken_rx) = tokio::sync::oneshot::channel::<()>();
    // Done once a new process took over; never without a takeover socket.
    let mut taken = Box::pin(async move {
        if taken_rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    });
    if let Some(offer) = offer {
        log::info(&format!(
            "a new process can take over with --takeover {}",
            offer.path().display()
        ));
        std::thread::Builder::new()
            .name("cove-takeover".into())
            .spawn(move || {
                offer.serve(handed);
                let _ = taken_tx.send(());
            })?;
    } else {
        drop(handed);
    }
    let reloader = config
        .deploy
        .on_hangup
        .clone()
        .map(Reloader::start)
        .transpose()?;
    tokio::task::LocalSet::new().block_on(&rt, async {
        if let Some(reopen) = reopen_log {
            tokio::spawn(reopen);
        }
        if let Some(l) = redirect {
            log::info(&format!(
                "redirecting http://{} to https",
                l.local_addr()
                    .map_or_else(|e| e.to_string(), |a| a.to_string())
            ));
            tokio::task::spawn_local(tls::redirect::serve(l, local.port(), http));
        }
        if let Some(tls::TlsSource::Acme(acme)) = &protocols.tls {
            tokio::spawn(acme.clone().run());
        }
        // Certificates are read again on SIGHUP, and when their files change
        // (a renewal by certbot or the like): checked every few seconds.
        let mut recheck = tokio::time::interval(CERT_RECHECK);
        loop {
            tokio::select! {
                _ = sigint.recv() => break,
                _ = sigterm.recv() => break,
                _ = hangup(&mut sighup) => {
                    if let Some(certs) = &protocols.tls {
                        certs.reload();
                    }
                    if let Some(r) = &reloader {
                        r.request();
                    }
                }
                _ = &mut taken => {
                    log::info("a new process took over the listening sockets");
                    break;
                }
                _ = recheck.tick() => {
                    if let Some(certs) = &protocols.tls {
                        certs.reload_if_changed();
                    }
                }
            }
        }
        log::info(&format!(
            "shutting down: draining in-flight requests (up to {} ms)",
            drain.as_millis()
        ));
        let _ = stop_tx.send(true);
        let joined = tokio::task::spawn_blocking(move || join_all(workers));
        tokio::select! {
            _ = joined => {}
            _ = sigint.recv() => force_exit(),
            _ = sigterm.recv() => force_exit(),
        }
    });
    // Every request answered has its line written before the process ends.
    if let Some(log) = &config.access_log {
        log.flush_and_stop();
    }
    Ok(())
}

/// The listening sockets: handed over by the server at `--takeover`,
/// passed by systemd, or bound here (one per worker). Inherited sockets are
/// shared out among the workers; every one of them is accepted from.
fn acquire(
    config: &ServerConfig,
) -> std::io::Result<(Vec<std::net::TcpListener>, Option<handover::Incoming>)> {
    let workers = config.workers.max(1);
    let (inherited, incoming) = match &config.deploy.take_over {
        Some(path) => {
            let (ls, incoming) = handover::take_over(path)?;
            (ls, Some(incoming))
        }
        None => match handover::systemd_listeners()? {
            Some(ls) => (ls, None),
            None => return Ok((listener::bind_all(config.addr, workers)?, None)),
        },
    };
    let n = inherited.len();
    if n > 1
        && inherited
            .iter()
            .any(|l| l.local_addr().ok() != inherited[0].local_addr().ok())
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the inherited sockets listen on different addresses; Cove serves one",
        ));
    }
    let mut all = inherited;
    for i in n..workers {
        let copy = all[i % n].try_clone()?;
        all.push(copy);
    }
    Ok((all, incoming))
}

/// Whether the listening sockets will be inherited (`--takeover`, systemd)
/// rather than bound: then the port is not checked for being free.
pub fn inherits_listeners(deploy: &crate::Deploy) -> bool {
    deploy.take_over.is_some()
        || (std::env::var_os("LISTEN_FDS").is_some()
            && std::env::var("LISTEN_PID")
                .ok()
                .and_then(|p| p.parse::<u32>().ok())
                == Some(std::process::id()))
}

/// Runs the app reloads SIGHUP asks for, one at a time, on a thread of its
/// own (a reload waits for every worker).
struct Reloader(std::sync::mpsc::Sender<()>);

type ReloadFn = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

impl Reloader {
    fn start(reload: ReloadFn) -> std::io::Result<Reloader> {
        let (tx, rx) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("cove-reload".into())
            .spawn(move || {
                while rx.recv().is_ok() {
                    // Signals that came during this reload ask for one more.
                    while rx.try_recv().is_ok() {}
                    log::info("SIGHUP: reloading the app");
                    match reload() {
                        Ok(()) => log::info("reloaded the app on every worker"),
                        Err(msg) => log::error(&format!(
                            "reload failed: {msg} (still serving the previous version)"
                        )),
                    }
                }
            })?;
        Ok(Reloader(tx))
    }

    fn request(&self) {
        let _ = self.0.send(());
    }
}

/// The next SIGHUP, if it is caught; never otherwise.
async fn hangup(sighup: &mut Option<tokio::signal::unix::Signal>) {
    match sighup {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

fn join_all(workers: Vec<JoinHandle<()>>) {
    for w in workers {
        let _ = w.join();
    }
}

fn force_exit() {
    log::warn("second signal: stopping now without draining");
    std::process::exit(1);
}
