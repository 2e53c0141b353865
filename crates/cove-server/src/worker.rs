//! One worker: a current-thread tokio runtime serving one listener with one
//! handler (and so one script VM) until shutdown, then draining.

use std::convert::Infallible;
use std::io;
use std::net::TcpListener as StdListener;
use std::rc::Rc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::LocalSet;

use cove_core::log;

use crate::config::HttpLimits;
use crate::timeouts::Timed;
use crate::{reject, Handler};

/// Request headers allowed (more → 431 from hyper). hyper's own default:
/// up to it, the parser keeps them on the stack.
const MAX_HEADERS: usize = 100;

/// hyper's default read buffer limit (~400 KiB); a head must fit in it.
const HYPER_MAX_BUF: usize = 8192 + 4096 * 100;

fn http_builder(limits: &HttpLimits) -> http1::Builder {
    let mut b = http1::Builder::new();
    b.keep_alive(true)
        .max_headers(MAX_HEADERS)
        // hyper answers a head over this with 431 and closes.
        .max_header_size(limits.max_header)
        .max_buf_size(limits.max_header.max(HYPER_MAX_BUF))
        // `Timed` keeps the header and idle timeouts: hyper's one timer
        // cannot tell a slow head from an idle connection, nor send 408.
        .header_read_timeout(None);
    b
}

pub(crate) fn run<H: Handler>(
    handler: H,
    listener: StdListener,
    mut shutdown: watch::Receiver<bool>,
    limits: HttpLimits,
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
        let builder = http_builder(&limits);
        let max_url = limits.max_url;
        let mut failed_accepts = 0u64;
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        if failed_accepts > 0 {
                            log::info(&format!("accepting again after {failed_accepts} failed attempt(s)"));
                            failed_accepts = 0;
                        }
                        let _ = stream.set_nodelay(true);
                        let stream = Timed::new(stream, &limits);
                        let activity = stream.activity();
                        let h = handler.clone();
                        let service = service_fn(move |req| {
                            // Also whether the head had both Content-Length and
                            // Transfer-Encoding, which hyper hides (timeouts.rs).
                            let framing_conflict = activity.busy();
                            let (h, activity) = (h.clone(), activity.clone());
                            async move {
                                let res = match reject::check(&req, max_url, framing_conflict) {
                                    Some(refused) => refused,
                                    None => h.handle(req).await,
                                };
                                activity.answered();
                                Ok::<_, Infallible>(res)
                            }
                        });
                        let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
                        tokio::task::spawn_local(async move {
                            // Client resets and timeouts end a connection; nothing to report.
                            let _ = conn.await;
                        });
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
        if tokio::time::timeout(drain, graceful.shutdown()).await.is_err() {
            log::warn("drain timeout reached; closing the remaining connections");
        }
        Ok(())
    })
}
