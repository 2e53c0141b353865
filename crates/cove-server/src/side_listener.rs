//! Listeners beside the app's: the HTTPS redirect and the metrics. Each
//! answers every request from a plain function, over the same stream and
//! body types as the app's HTTP/1.1 (io.rs): a second instantiation of
//! hyper's connection would stop its head parser and encoder from being
//! inlined into the app's, and every app request would pay ~300
//! instructions (measured on `cove baseline`).

use std::convert::Infallible;

use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::config::HttpLimits;
use crate::io::Io;
use crate::timeouts::Timed;
use crate::Body;

/// Answer each request on `listener` with `answer`, with `limits`' header
/// and idle timeouts, until the task is dropped; in a `LocalSet`.
pub(crate) async fn serve<F>(listener: TcpListener, limits: HttpLimits, answer: F)
where
    F: Fn(&Request<Incoming>) -> Response<Body> + Clone + 'static,
{
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of descriptors and the like: back off, keep listening.
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            continue;
        };
        let stream = Timed::new(Io::Plain(stream), &limits);
        let activity = stream.activity();
        let answer = answer.clone();
        let service = service_fn(move |req| {
            activity.busy();
            let res = answer(&req);
            activity.answered();
            async move { Ok::<_, Infallible>(res) }
        });
        let conn = http1::Builder::new()
            .header_read_timeout(None)
            .serve_connection(TokioIo::new(stream), service);
        tokio::task::spawn_local(async move {
            let _ = conn.await;
        });
    }
}
