//! One worker: a current-thread tokio runtime serving one listener with one
//! handler (and so one script VM) until shutdown, then draining.

use std::convert::Infallible;
use std::io;
use std::net::TcpListener as StdListener;
use std::rc::Rc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::LocalSet;

use cove_core::log;

use crate::Handler;

fn http_builder() -> http1::Builder {
    let mut b = http1::Builder::new();
    b.keep_alive(true)
        .max_headers(100)
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(30));
    b
}

pub(crate) fn run<H: Handler>(
    handler: H,
    listener: StdListener,
    mut shutdown: watch::Receiver<bool>,
    drain: Duration,
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    LocalSet::new().block_on(&rt, async move {
        let listener = TcpListener::from_std(listener)?;
        let handler = Rc::new(handler);
        handler.start();
        let graceful = GracefulShutdown::new();
        let builder = http_builder();
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        let h = handler.clone();
                        let service = service_fn(move |req| {
                            let h = h.clone();
                            async move { Ok::<_, Infallible>(h.handle(req).await) }
                        });
                        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
                        tokio::task::spawn_local(async move {
                            // Client resets and timeouts end a connection; nothing to report.
                            let _ = conn.await;
                        });
                    }
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        log::warn(&format!("accept failed: {e}"));
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                },
                _ = shutdown.changed() => break,
            }
        }
        drop(listener);
        if tokio::time::timeout(drain, graceful.shutdown()).await.is_err() {
            log::warn("drain timeout reached; closing the remaining connections");
        }
        Ok(())
    })
}
