//! `--metrics ADDR`: Prometheus metrics on a listener of their own.
//!
//! The `metrics` facade records into `metrics-exporter-prometheus`'s
//! recorder, installed once for the process; this module serves its text
//! at `/metrics` from a thread of its own, with a dashboard that charts it
//! at `/` and the last handler errors at `/errors` (`recent.rs`). Off (the
//! default), nothing is installed and a worker's request path pays one
//! branch (`ScriptHandler::metrics` is `None`).
//!
//! On, each worker keeps the handles it records into ([`RequestMetrics`]):
//! a small table indexed by route, method and status class, filled on a
//! route's first request, so a request costs a few relaxed atomic adds and
//! no registry lookup. Every series carries a `worker` label, so no two
//! workers add to the same atomic.

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use cove_core::log;

mod clocks;
mod recent;
mod request;
mod serve;
mod sockets;

pub(crate) use request::{for_this_worker, InFlight, RequestMetrics};

/// Upper bounds of the duration histograms' buckets, in seconds.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How often the histograms' samples are folded into their buckets between
/// scrapes (the recorder keeps them in a queue until then).
const UPKEEP: Duration = Duration::from_secs(5);

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Whether `--metrics` is on in this process.
pub fn enabled() -> bool {
    cove_core::telemetry::on()
}

#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error(
        "--metrics {0} is the app's own address: give the metrics a port of their own (e.g. 127.0.0.1:9100)"
    )]
    AppAddress(SocketAddr),
    #[error("cannot listen for metrics on {addr}: {error}")]
    Bind {
        addr: SocketAddr,
        error: std::io::Error,
    },
    #[error("metrics: {0}")]
    Install(String),
}

/// Whether `metrics` and `app` would take the same port on a shared address.
fn same_port(metrics: SocketAddr, app: SocketAddr) -> bool {
    metrics.port() != 0
        && metrics.port() == app.port()
        && (metrics.ip() == app.ip() || metrics.ip().is_unspecified() || app.ip().is_unspecified())
}

/// Install the recorder and serve `/metrics` (and `/`, `/errors`) on
/// `addr` (never `app`, the app's own address), from a thread of its own.
/// Returns the address it listens on (`addr` with port 0 picks one).
pub fn start(addr: SocketAddr, app: SocketAddr) -> Result<SocketAddr, MetricsError> {
    if same_port(addr, app) {
        return Err(MetricsError::AppAddress(addr));
    }
    let listener =
        std::net::TcpListener::bind(addr).map_err(|error| MetricsError::Bind { addr, error })?;
    let local = listener
        .local_addr()
        .map_err(|error| MetricsError::Bind { addr, error })?;
    listener
        .set_nonblocking(true)
        .map_err(|error| MetricsError::Bind { addr, error })?;
    let recorder = PrometheusBuilder::new()
        .set_buckets(BUCKETS)
        .map_err(|e| MetricsError::Install(e.to_string()))?
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).map_err(|e| MetricsError::Install(e.to_string()))?;
    let _ = HANDLE.set(handle.clone());
    sockets::METRICS_PORT.store(local.port(), std::sync::atomic::Ordering::Relaxed);
    describe();
    metrics::gauge!("cove_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    cove_core::telemetry::enable();
    std::thread::Builder::new()
        .name("cove-metrics".into())
        .spawn(move || serve::serve(listener, handle))
        .map_err(|error| MetricsError::Bind { addr, error })?;
    log::info(&format!(
        "metrics on http://{local}/metrics, dashboard on http://{local}/"
    ));
    Ok(local)
}

fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_gauge!("cove_build_info", "Cove's version (the value is always 1).");
    describe_counter!(
        "cove_requests_total",
        "Requests answered, by route pattern, method and status class."
    );
    describe_histogram!(
        "cove_request_duration_seconds",
        Unit::Seconds,
        "Time from a request's head to its response, by route pattern."
    );
    describe_gauge!("cove_requests_in_flight", "Requests being handled now.");
    describe_counter!(
        "cove_handler_errors_total",
        "Script errors raised by handlers and middleware."
    );
    describe_counter!(
        "cove_budget_hits_total",
        "Script calls stopped by the instruction budget (--max-instructions)."
    );
    describe_counter!(
        "cove_heap_cap_hits_total",
        "Script calls stopped by the VM heap cap (-m)."
    );
    describe_counter!(
        "cove_body_limit_rejections_total",
        "Requests refused with 413 for a body over --max-body."
    );
    describe_gauge!(
        "cove_vm_heap_bytes",
        Unit::Bytes,
        "Bytes the worker's script VM heap holds (sampled at most once a second)."
    );
    describe_gauge!(
        "cove_open_connections",
        "Established TCP connections to the app's ports (read from /proc when scraped)."
    );
    describe_gauge!(
        "cove_live_connections",
        "Open event streams and WebSocket connections."
    );
    describe_counter!(
        "cove_worker_cpu_microseconds_total",
        Unit::Microseconds,
        "CPU time of each worker thread (read when scraped)."
    );
}

/// A gauge of open event streams and WebSockets on this worker, if
/// `--metrics` is on.
pub(crate) fn live_gauge() -> Option<metrics::Gauge> {
    enabled().then(|| metrics::gauge!("cove_live_connections", "worker" => worker_label()))
}

/// This thread's worker label (`cove_core::audit`'s worker number).
pub(crate) fn worker_label() -> String {
    cove_core::audit::context()
        .worker
        .map_or_else(|| "0".to_string(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_address_is_refused() {
        let app: SocketAddr = "127.0.0.1:3000".parse().unwrap();
        assert!(same_port("127.0.0.1:3000".parse().unwrap(), app));
        assert!(same_port("0.0.0.0:3000".parse().unwrap(), app));
        assert!(!same_port("127.0.0.1:9100".parse().unwrap(), app));
        assert!(!same_port("127.0.0.1:0".parse().unwrap(), app));
    }
}
