//! One worker: a current-thread tokio runtime serving one listener with one
//! handler (and so one script VM) until shutdown, then draining.

use std::io;
use std::net::TcpListener as StdListener;
use std::rc::Rc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::LocalSet;

use cove_core::log;

use crate::config::{HttpLimits, Protocols};
use crate::conn::Server;
use crate::drain::Drain;
use crate::Handler;

pub(crate) fn run<H: Handler>(
    handler: H,
    listener: StdListener,
    shutdown: watch::Receiver<bool>,
    limits: HttpLimits,
    protocols: Protocols,
    drain: Duration,
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    LocalSet::new().block_on(&rt, async move {
        // The worker's loop is a task of its own: the future `block_on`
        // runs is polled again whenever any of the worker's tasks wakes (at
        // every request), and polling the accept and the shutdown watch
        // there cost ~400 instructions a request (callgrind); a task is
        // polled only when woken.
        let work = serve(handler, listener, shutdown, limits, protocols, drain);
        match tokio::task::spawn_local(work).await {
            Ok(done) => done,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(io::Error::other(e)),
        }
    })
}

/// Accept connections until shutdown, then drain them.
async fn serve<H: Handler>(
    handler: H,
    listener: StdListener,
    mut shutdown: watch::Receiver<bool>,
    limits: HttpLimits,
    protocols: Protocols,
    drain: Duration,
) -> io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let handler = Rc::new(handler);
    handler.start();
    let graceful = Drain::new();
    let server = Rc::new(Server::new(handler, limits, &protocols));
    let mut failed_accepts = 0u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    if failed_accepts > 0 {
                        log::info(&format!("accepting again after {failed_accepts} failed attempt(s)"));
                        failed_accepts = 0;
                    }
                    server.accept(stream, peer, graceful.watcher());
                }
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep
                    // serving, and say so once a streak, not 50 times a second.
                    if failed_accepts == 0 {
                        log::warn(&format!(
                            "accept failed: {e}; new connections wait in the backlog, retrying every 20 ms"
                        ));
                    }
                    failed_accepts += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            },
            _ = shutdown.changed() => break,
        }
    }
    drop(listener);
    server.draining.set(true);
    if tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_err()
    {
        log::warn("drain timeout reached; closing the remaining connections");
    }
    Ok(())
}
