//! `--metrics ADDR`: Prometheus metrics on a listener of their own.
//!
//! The `metrics` facade records into `metrics-exporter-prometheus`'s
//! recorder, installed once for the process; this module serves its text
//! at `/metrics` from a thread of its own. Off (the default), nothing is
//! installed and a worker's request path pays one branch
//! (`ScriptHandler::metrics` is `None`).
//!
//! On, each worker keeps the handles it records into ([`RequestMetrics`]):
//! a small table indexed by route, method and status class, filled on a
//! route's first request, so a request costs a few relaxed atomic adds and
//! no registry lookup. Every series carries a `worker` label, so no two
//! workers add to the same atomic.

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use metrics::{Counter, Gauge, Histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};

use cove_core::{log, LimitHit, RouteTable};

/// Upper bounds of the duration histograms' buckets, in seconds.
const BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// How often the histograms' samples are folded into their buckets between
/// scrapes (the recorder keeps them in a queue until then).
const UPKEEP: Duration = Duration::from_secs(5);

/// How often a worker's VM heap is sampled at most (on a request's end).
const HEAP_EVERY: Duration = Duration::from_secs(1);

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

/// Install the recorder and serve `/metrics` on `addr` (never `app`, the
/// app's own address), from a thread of its own. Returns the address it
/// listens on (`addr` with port 0 picks one).
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
    describe();
    metrics::gauge!("cove_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
    cove_core::telemetry::enable();
    std::thread::Builder::new()
        .name("cove-metrics".into())
        .spawn(move || serve(listener, handle))
        .map_err(|error| MetricsError::Bind { addr, error })?;
    log::info(&format!("metrics on http://{local}/metrics"));
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
        "cove_live_connections",
        "Open event streams and WebSocket connections."
    );
    describe_counter!(
        "cove_worker_cpu_microseconds_total",
        Unit::Microseconds,
        "CPU time of each worker thread (read when scraped)."
    );
}

/// Answer `/metrics` on `listener` until the process ends; and fold the
/// histograms' samples every [`UPKEEP`].
fn serve(listener: std::net::TcpListener, handle: PrometheusHandle) {
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

/// Each worker thread's CPU clock, by worker label.
static WORKER_CLOCKS: Mutex<Vec<(String, libc::clockid_t)>> = Mutex::new(Vec::new());

/// Note this thread's CPU clock as `worker`'s (once per worker).
#[allow(unsafe_code)]
fn register_worker_clock(worker: &str) {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self is this live thread; `clock` is a valid out pointer.
    if unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } != 0 {
        return;
    }
    let mut clocks = WORKER_CLOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    match clocks.iter_mut().find(|(w, _)| w == worker) {
        Some(entry) => entry.1 = clock,
        None => clocks.push((worker.to_string(), clock)),
    }
}

/// Read the workers' CPU clocks into `cove_worker_cpu_microseconds_total`
/// (on the metrics thread, as it is scraped: nothing on the request path).
#[allow(unsafe_code)]
fn sample_workers() {
    let clocks = WORKER_CLOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    for (worker, clock) in clocks.iter() {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out pointer; a clock whose thread has
        // ended fails (EINVAL) and is skipped.
        if unsafe { libc::clock_gettime(*clock, &mut ts) } != 0 {
            continue;
        }
        let micros = ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000;
        metrics::counter!("cove_worker_cpu_microseconds_total", "worker" => worker.clone())
            .absolute(micros);
    }
}

/// The methods counted by name; any other is `OTHER`, so a client cannot
/// make up series.
const METHODS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "OTHER",
];
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

fn method_index(method: &str) -> usize {
    METHODS[..7].iter().position(|m| *m == method).unwrap_or(7)
}

fn class_index(status: u16) -> usize {
    usize::from(status / 100).clamp(1, 5) - 1
}

/// A request's route for the metrics: the handler that matched
/// ([`cove_core::Target::Route`]), or none (404, 405, static files).
pub(crate) type RouteKey = Option<cove_core::HandlerId>;

/// One route's handles on one worker.
struct RouteHandles {
    duration: Histogram,
    /// By method and status class; each made on first use.
    requests: [Option<Counter>; METHODS.len() * CLASSES.len()],
}

/// One worker's metric handles.
pub(crate) struct RequestMetrics {
    worker: String,
    in_flight: Gauge,
    errors: Counter,
    budget: Counter,
    heap_cap: Counter,
    too_large: Counter,
    heap: Gauge,
    /// When `heap` was last set.
    heap_at: Cell<Option<Instant>>,
    /// Indexed by handler id + 1; 0 is "no route".
    routes: RefCell<Vec<Option<Box<RouteHandles>>>>,
}

/// The handles of the worker this thread is (`cove_core::audit`'s worker
/// number), if `--metrics` is on.
pub(crate) fn for_this_worker() -> Option<Box<RequestMetrics>> {
    enabled().then(|| {
        let worker = cove_core::audit::context()
            .worker
            .map_or_else(|| "0".to_string(), |n| n.to_string());
        register_worker_clock(&worker);
        Box::new(RequestMetrics::new(worker))
    })
}

impl RequestMetrics {
    pub(crate) fn new(worker: String) -> RequestMetrics {
        let w = worker.clone();
        RequestMetrics {
            in_flight: metrics::gauge!("cove_requests_in_flight", "worker" => w.clone()),
            errors: metrics::counter!("cove_handler_errors_total", "worker" => w.clone()),
            budget: metrics::counter!("cove_budget_hits_total", "worker" => w.clone()),
            heap_cap: metrics::counter!("cove_heap_cap_hits_total", "worker" => w.clone()),
            heap: metrics::gauge!("cove_vm_heap_bytes", "worker" => w.clone()),
            heap_at: Cell::new(None),
            too_large: metrics::counter!("cove_body_limit_rejections_total", "worker" => w),
            worker,
            routes: RefCell::default(),
        }
    }

    /// A request has started: in flight until the guard is dropped (a
    /// request whose client went away is dropped without a response).
    pub(crate) fn start(&self) -> InFlight<'_> {
        self.in_flight.increment(1.0);
        InFlight {
            gauge: &self.in_flight,
            at: Instant::now(),
        }
    }

    /// The request of `flight` was answered with `status`.
    pub(crate) fn finish(
        &self,
        routes: &RouteTable,
        route: RouteKey,
        method: &str,
        status: u16,
        flight: InFlight<'_>,
    ) {
        let seconds = flight.at.elapsed().as_secs_f64();
        drop(flight);
        let slot = route.map_or(0, |id| id as usize + 1);
        let cell = method_index(method) * CLASSES.len() + class_index(status);
        let mut table = self.routes.borrow_mut();
        if table.len() <= slot {
            table.resize_with(slot + 1, || None);
        }
        let pattern = || route.and_then(|id| routes.pattern(id)).unwrap_or("<none>");
        let handles = table[slot].get_or_insert_with(|| {
            Box::new(RouteHandles {
                duration: metrics::histogram!(
                    "cove_request_duration_seconds",
                    "route" => pattern().to_string(),
                    "worker" => self.worker.clone()
                ),
                requests: std::array::from_fn(|_| None),
            })
        });
        handles.duration.record(seconds);
        handles.requests[cell]
            .get_or_insert_with(|| {
                metrics::counter!(
                    "cove_requests_total",
                    "route" => pattern().to_string(),
                    "method" => METHODS[cell / CLASSES.len()],
                    "status" => CLASSES[cell % CLASSES.len()],
                    "worker" => self.worker.clone()
                )
            })
            .increment(1);
    }

    /// Whether the VM's heap is due to be sampled (once a second at most,
    /// the first request included), as of `now`.
    pub(crate) fn heap_due(&self, now: Instant) -> bool {
        match self.heap_at.get() {
            Some(at) if now.saturating_duration_since(at) < HEAP_EVERY => false,
            _ => {
                self.heap_at.set(Some(now));
                true
            }
        }
    }

    /// The VM's heap holds `bytes`.
    #[cold]
    pub(crate) fn set_heap(&self, bytes: usize) {
        self.heap.set(bytes as f64);
    }

    /// A request refused for its body's size (413).
    #[cold]
    pub(crate) fn too_large(&self) {
        self.too_large.increment(1);
    }

    /// Script errors of one request, counted by kind.
    #[cold]
    pub(crate) fn errors(&self, errors: &[cove_core::ScriptError]) {
        for err in errors {
            self.errors.increment(1);
            match err.limit_hit() {
                Some(LimitHit::Budget) => self.budget.increment(1),
                Some(LimitHit::Heap) => self.heap_cap.increment(1),
                None => {}
            }
        }
    }
}

/// A request in flight, counted in `cove_requests_in_flight` until dropped.
pub(crate) struct InFlight<'a> {
    gauge: &'a Gauge,
    at: Instant,
}

impl InFlight<'_> {
    /// When the request started.
    pub(crate) fn at(&self) -> Instant {
        self.at
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.gauge.decrement(1.0);
    }
}

/// A gauge of open event streams and WebSockets on this worker, if
/// `--metrics` is on.
pub(crate) fn live_gauge() -> Option<Gauge> {
    enabled().then(|| {
        let worker = cove_core::audit::context()
            .worker
            .map_or_else(|| "0".to_string(), |n| n.to_string());
        metrics::gauge!("cove_live_connections", "worker" => worker)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use metrics_exporter_prometheus::PrometheusBuilder;

    fn table() -> RouteTable {
        let mut t = RouteTable::new();
        t.add_route("GET", "/tasks/:id", 3).unwrap();
        t.add_route("POST", "/tasks", 5).unwrap();
        t
    }

    #[test]
    fn the_table_makes_each_handle_once_and_counts_by_route_method_and_class() {
        let recorder = PrometheusBuilder::new()
            .set_buckets(BUCKETS)
            .unwrap()
            .build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || {
            let m = RequestMetrics::new("0".into());
            let routes = table();
            for status in [200, 200, 404, 500] {
                m.finish(&routes, Some(3), "GET", status, m.start());
            }
            m.finish(&routes, Some(5), "POST", 201, m.start());
            m.finish(&routes, None, "GET", 404, m.start());
            m.finish(&routes, None, "BREW", 413, m.start());
            m.too_large();
            // A request dropped unanswered leaves the in-flight gauge too.
            drop(m.start());
            // Slots 0 (none), 4 (handler 3) and 6 (handler 5).
            let table = m.routes.borrow();
            assert_eq!(table.len(), 7);
            assert_eq!(table.iter().filter(|s| s.is_some()).count(), 3);
            let get = table[4].as_ref().unwrap();
            assert_eq!(get.requests.iter().filter(|c| c.is_some()).count(), 3);
        });
        let text = handle.render();
        let has = |line: &str| text.lines().any(|l| l == line);
        assert!(has(
            r#"cove_requests_total{route="/tasks/:id",method="GET",status="2xx",worker="0"} 2"#
        ));
        assert!(has(
            r#"cove_requests_total{route="/tasks/:id",method="GET",status="5xx",worker="0"} 1"#
        ));
        assert!(has(
            r#"cove_requests_total{route="/tasks",method="POST",status="2xx",worker="0"} 1"#
        ));
        assert!(has(
            r#"cove_requests_total{route="<none>",method="OTHER",status="4xx",worker="0"} 1"#
        ));
        assert!(has(
            r#"cove_request_duration_seconds_count{route="/tasks/:id",worker="0"} 4"#
        ));
        assert!(has(r#"cove_requests_in_flight{worker="0"} 0"#));
        assert!(has(r#"cove_body_limit_rejections_total{worker="0"} 1"#));
    }

    #[test]
    fn methods_and_classes() {
        assert_eq!(METHODS[method_index("DELETE")], "DELETE");
        assert_eq!(METHODS[method_index("PROPFIND")], "OTHER");
        assert_eq!(CLASSES[class_index(204)], "2xx");
        assert_eq!(CLASSES[class_index(599)], "5xx");
        assert_eq!(CLASSES[class_index(42)], "1xx");
    }

    #[test]
    fn the_app_address_is_refused() {
        let app: SocketAddr = "127.0.0.1:3000".parse().unwrap();
        assert!(same_port("127.0.0.1:3000".parse().unwrap(), app));
        assert!(same_port("0.0.0.0:3000".parse().unwrap(), app));
        assert!(!same_port("127.0.0.1:9100".parse().unwrap(), app));
        assert!(!same_port("127.0.0.1:0".parse().unwrap(), app));
    }
}
