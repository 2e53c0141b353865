//! Graceful shutdown: a worker tells every connection it watches to finish
//! (hyper's own graceful shutdown: answer the requests in progress, then
//! close), and waits until all of them have.
//!
//! hyper-util's `GracefulShutdown` does the same, but its watcher is used
//! up by the one connection it watches. Here an HTTP/1.1 connection that
//! becomes a WebSocket hands its [`Watcher`] on to the WebSocket's driver
//! (conn.rs, ws/), which starts its close (1001) when the drain starts, and
//! the drain waits for it too.
//!
//! An HTTP/1.1 connection waiting for its next request is not closed at
//! once: a client may have sent that request already, and would see the
//! connection closed under it (a failed request, for most clients). For a
//! moment ([`H1_GRACE`]) every response says `Connection: close` instead
//! (the worker's `draining` flag, conn.rs), so a busy client is told in the
//! response it waits for; only then are the connections still open closed.

use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::time::Duration;

use hyper::server::conn::{http1, http2};
use tokio::sync::watch;

use crate::woken::Woken;

/// How long an HTTP/1.1 connection may still get a request (answered with
/// `Connection: close`) once the drain has started.
pub(crate) const H1_GRACE: Duration = Duration::from_millis(500);

/// A connection hyper can be asked to finish gracefully.
pub(crate) trait Graceful: Future {
    fn graceful_shutdown(self: Pin<&mut Self>);
}

impl<I, B, S> Graceful for http1::Connection<I, S>
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        http1::Connection::graceful_shutdown(self);
    }
}

impl<I, B, S, E> Graceful for http2::Connection<I, S, E>
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    E: hyper::rt::bounds::Http2ServerConnExec<S::Future, B>,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        http2::Connection::graceful_shutdown(self);
    }
}

/// The worker's side: starts the shutdown and waits for the connections.
pub(crate) struct Drain {
    tx: watch::Sender<()>,
}

/// A connection's side: counted by the drain until dropped.
#[derive(Clone)]
pub(crate) struct Watcher {
    rx: watch::Receiver<()>,
}

impl Drain {
    pub(crate) fn new() -> Drain {
        Drain {
            tx: watch::channel(()).0,
        }
    }

    pub(crate) fn watcher(&self) -> Watcher {
        Watcher {
            rx: self.tx.subscribe(),
        }
    }

    /// Tell every watcher to finish; returns once all are dropped.
    pub(crate) async fn shutdown(self) {
        let _ = self.tx.send(());
        self.tx.closed().await;
    }
}

impl Watcher {
    /// Returns once the drain has started (at once if it already has).
    pub(crate) async fn stopping(&mut self) {
        let _ = self.rx.changed().await;
    }

    /// Serve `conn`, asking it to finish gracefully once the drain starts.
    /// The drain counts the watcher, not `conn`: it waits for whoever
    /// holds the watcher next too.
    pub(crate) async fn watch<C: Graceful>(&mut self, conn: Pin<&mut C>) -> C::Output {
        self.watch_after(conn, Duration::ZERO).await
    }

    /// [`Watcher::watch`], asking `conn` to finish `grace` after the drain
    /// has started.
    pub(crate) async fn watch_after<C: Graceful>(
        &mut self,
        mut conn: Pin<&mut C>,
        grace: Duration,
    ) -> C::Output {
        let rx = &mut self.rx;
        let stopping = pin!(async move {
            let _ = rx.changed().await;
            if !grace.is_zero() {
                tokio::time::sleep(grace).await;
            }
        });
        // Polled only when the watch or the grace timer wakes it, not at
        // every request the connection serves (woken.rs).
        let mut stopping = Woken::new(stopping);
        let mut asked = false;
        poll_fn(|cx| {
            if !asked && Pin::new(&mut stopping).poll(cx).is_ready() {
                asked = true;
                conn.as_mut().graceful_shutdown();
            }
            conn.as_mut().poll(cx)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local<F: Future>(f: F) -> F::Output {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        tokio::task::LocalSet::new().block_on(&rt, f)
    }

    #[test]
    fn shutdown_waits_for_every_watcher_and_tells_late_clones() {
        local(async {
            let drain = Drain::new();
            let mut first = drain.watcher();
            let early_clone = first.clone();
            let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
            tokio::task::spawn_local(async move {
                first.stopping().await;
                // A clone made before the signal also sees it.
                let mut late = early_clone;
                late.stopping().await;
                done_tx.send(()).unwrap();
            });
            drain.shutdown().await;
            assert_eq!(done_rx.recv().await, Some(()));
        });
    }

    #[test]
    fn a_drain_with_no_watchers_is_done_at_once() {
        local(Drain::new().shutdown());
    }
}
