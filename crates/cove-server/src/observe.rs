//! What a request leaves behind for its operator: the metrics
//! (`--metrics`) and the access log (`--access-log`), one hook for both.
//!
//! Off (the default), a worker has no [`Observe`] and a request pays one
//! branch at its start and one at its end. On, [`Observe::begin`] notes
//! what the request's start says (boxed, so that the request's future stays
//! the size it is without them), and [`Observe::end`] records it with the
//! response: neither is inlined into the request path.

use std::net::SocketAddr;
use std::time::{Instant, SystemTime};

use hyper::body::Body as _;
use hyper::http::request::Parts;

use cove_core::{HandlerId, RouteTable, ScriptError};

use crate::convert::HttpResponse;
use crate::metrics::{self, InFlight, RequestMetrics};

/// One worker's observers.
pub(crate) struct Observe {
    metrics: Option<RequestMetrics>,
}

/// A request being observed: what its start said. Held in the request's
/// future (not boxed: an allocation would cost more than its bytes do).
pub(crate) struct Seen<'a> {
    at: Instant,
    /// The route that matched, if one did.
    pub(crate) route: Option<HandlerId>,
    _in_flight: Option<InFlight<'a>>,
}

impl Observe {
    /// This worker's observers, if any is on.
    pub(crate) fn for_this_worker() -> Option<Box<Observe>> {
        let metrics = metrics::for_this_worker();
        metrics.is_some().then(|| Box::new(Observe { metrics }))
    }

    /// A request with `head` has started.
    #[inline(never)]
    pub(crate) fn begin(&self, _head: &Parts) -> Seen<'_> {
        Seen {
            at: Instant::now(),
            route: None,
            _in_flight: self.metrics.as_ref().map(RequestMetrics::start),
        }
    }

    /// The request of `seen` (`head`, from `peer`) is answered with
    /// `res`; `heap` reads the VM's heap size (called at most once a
    /// second).
    pub(crate) fn end(
        &self,
        seen: &Seen<'_>,
        head: &Parts,
        _peer: SocketAddr,
        res: &mut HttpResponse,
        routes: &RouteTable,
        heap: impl FnOnce() -> usize,
    ) {
        let now = Instant::now();
        let status = res.status().as_u16();
        if let Some(m) = &self.metrics {
            if m.heap_due(now) {
                m.set_heap(heap());
            }
            let seconds = now.saturating_duration_since(seen.at).as_secs_f64();
            m.finish(routes, seen.route, head.method.as_str(), status, seconds);
        }
        let _bytes = res.body().size_hint().exact();
        let _ = SystemTime::now;
    }

    /// A request refused for its body's size (413).
    #[cold]
    pub(crate) fn too_large(&self) {
        if let Some(m) = &self.metrics {
            m.too_large();
        }
    }

    /// The script errors of a request (`method` `path`).
    #[cold]
    pub(crate) fn errors(&self, errors: &[ScriptError], method: &str, path: &str) {
        if let Some(m) = &self.metrics {
            m.errors(errors, method, path);
        }
    }
}
