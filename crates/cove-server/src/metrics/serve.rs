//! The metrics listener: `/metrics` in Prometheus text format.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use metrics_exporter_prometheus::PrometheusHandle;

use cove_core::log;

use super::clocks::sample_workers;
use super::UPKEEP;

/// Answer `/metrics` on `listener` until the process ends; and fold the
/// histograms' samples every [`UPKEEP`].
pub(super) fn serve(listener: std::net::TcpListener, handle: PrometheusHandle) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        log::error("metrics: cannot start the listener's runtime");
        return;
    };
    rt.block_on(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            log::error("metrics: cannot use the listener");
            return;
        };
        let upkeep = handle.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(UPKEEP);
            loop {
                tick.tick().await;
                upkeep.run_upkeep();
            }
        });
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let handle = handle.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let res = answer(&handle, &req);
                    async move { Ok::<_, Infallible>(res) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

fn answer<B>(handle: &PrometheusHandle, req: &hyper::Request<B>) -> hyper::Response<Full<Bytes>> {
    let (status, body, kind) = match (req.method(), req.uri().path()) {
        (&hyper::Method::GET, "/metrics") => (
            200,
            {
                sample_workers();
                handle.render()
            },
            "text/plain; version=0.0.4; charset=utf-8",
        ),
        _ => (
            404,
            "Not Found: the metrics are at /metrics\n".to_string(),
            "text/plain",
        ),
    };
    let mut res = hyper::Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(kind));
    res
}
