//! One worker's request metrics: handles made on a route's first request,
//! so a request costs a few relaxed atomic adds and no registry lookup.

use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use metrics::{Counter, Gauge, Histogram};

use cove_core::{LimitHit, RouteTable};

use super::clocks::register_worker_clock;
use super::{enabled, worker_label};

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
    in_flight: Arc<InFlightCount>,
    errors: Counter,
    budget: Counter,
    heap_cap: Counter,
    too_large: Counter,
    heap: Gauge,
    /// Indexed by handler id + 1; 0 is "no route".
    routes: RefCell<Vec<Option<Box<RouteHandles>>>>,
}

/// The handles of the worker this thread is (`cove_core::audit`'s worker
/// number), if `--metrics` is on.
pub(crate) fn for_this_worker() -> Option<RequestMetrics> {
    enabled().then(|| {
        let worker = worker_label();
        register_worker_clock(&worker);
        RequestMetrics::new(worker)
    })
}

impl RequestMetrics {
    pub(crate) fn new(worker: String) -> RequestMetrics {
        let w = worker.clone();
        RequestMetrics {
            in_flight: InFlightCount::new(metrics::gauge!(
                "cove_requests_in_flight",
                "worker" => w.clone()
            )),
            errors: metrics::counter!("cove_handler_errors_total", "worker" => w.clone()),
            budget: metrics::counter!("cove_budget_hits_total", "worker" => w.clone()),
            heap_cap: metrics::counter!("cove_heap_cap_hits_total", "worker" => w.clone()),
            heap: metrics::gauge!("cove_vm_heap_bytes", "worker" => w.clone()),
            too_large: metrics::counter!("cove_body_limit_rejections_total", "worker" => w),
            worker,
            routes: RefCell::default(),
        }
    }

    /// A request has started: in flight until the guard is dropped (a
    /// request whose client went away is dropped without a response).
    pub(crate) fn start(&self) -> InFlight<'_> {
        add(&self.in_flight.count, 1);
        InFlight(&self.in_flight.count)
    }

    /// A request to `route` with `method` was answered with `status`
    /// after `seconds`.
    pub(crate) fn finish(
        &self,
        routes: &RouteTable,
        route: RouteKey,
        method: &str,
        status: u16,
        seconds: f64,
    ) {
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

    /// Script errors of one request (`method` `path`), counted by kind
    /// and kept for the dashboard's table.
    #[cold]
    pub(crate) fn errors(&self, errors: &[cove_core::ScriptError], method: &str, path: &str) {
        for err in errors {
            self.errors.increment(1);
            super::recent::record(&self.worker, method, path, &err.message);
            match err.limit_hit() {
                Some(LimitHit::Budget) => self.budget.increment(1),
                Some(LimitHit::Heap) => self.heap_cap.increment(1),
                None => {}
            }
        }
    }
}

/// One worker's requests in flight, counted on the worker and read into
/// `cove_requests_in_flight` when `/metrics` is scraped
/// ([`sample_in_flight`]). The gauge's own increment and decrement are a
/// compare-and-swap loop on an `f64` and a generation count, two locked
/// instructions each, per request; here only the worker writes the count,
/// so a load and a store do.
struct InFlightCount {
    count: AtomicI64,
    gauge: Gauge,
}

/// Every worker's count, for the scrape.
static IN_FLIGHT: Mutex<Vec<Weak<InFlightCount>>> = Mutex::new(Vec::new());

impl InFlightCount {
    fn new(gauge: Gauge) -> Arc<InFlightCount> {
        let count = Arc::new(InFlightCount {
            count: AtomicI64::new(0),
            gauge,
        });
        let mut all = IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner);
        all.retain(|c| c.strong_count() > 0);
        all.push(Arc::downgrade(&count));
        count
    }
}

impl Drop for InFlightCount {
    fn drop(&mut self) {
        // A worker gone leaves its last count, not the last one scraped.
        self.gauge.set(*self.count.get_mut() as f64);
    }
}

/// Set each worker's `cove_requests_in_flight` to its count now (on the
/// metrics thread, as `/metrics` is scraped).
pub(super) fn sample_in_flight() {
    let all = IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner);
    for count in all.iter().filter_map(Weak::upgrade) {
        count.gauge.set(count.count.load(Ordering::Relaxed) as f64);
    }
}

/// Add `n` to a count only its worker writes: no locked instruction.
#[inline(always)]
fn add(count: &AtomicI64, n: i64) {
    count.store(count.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

/// A request in flight, counted in `cove_requests_in_flight` until dropped.
pub(crate) struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        add(self.0, -1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::BUCKETS;
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
                m.finish(&routes, Some(3), "GET", status, 0.002);
            }
            m.finish(&routes, Some(5), "POST", 201, 0.002);
            m.finish(&routes, None, "GET", 404, 0.002);
            m.finish(&routes, None, "BREW", 413, 0.002);
            m.too_large();
            // A request dropped unanswered leaves the in-flight gauge too.
            let first = m.start();
            let second = m.start();
            sample_in_flight();
            assert!(handle
                .render()
                .contains(r#"cove_requests_in_flight{worker="0"} 2"#));
            drop((first, second));
            sample_in_flight();
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
}
