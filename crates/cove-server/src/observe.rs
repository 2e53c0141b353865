//! What a request leaves behind for its operator: the metrics
//! (`--metrics`) and the access log (`--access-log`), one hook for both.
//!
//! Off (the default), a worker has no [`Observe`] and a request pays one
//! branch at its start and one at its end. On, [`Observe::begin`] notes
//! what the request's start says and [`Observe::end`] records it with the
//! response; the note lives in the request's future (an allocation would
//! cost more than its bytes), and neither call is inlined into the
//! request path.

use std::borrow::Cow;
use std::cell::Cell;
use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hyper::body::Body as _;
use hyper::header::{HeaderName, HeaderValue, REFERER, USER_AGENT};
use hyper::http::request::Parts;

use cove_core::{HandlerId, RouteTable, ScriptError};

use crate::access_log::{request_id, AccessLog, Entry, WorkerLog};
use crate::convert::HttpResponse;
use crate::metrics::{self, InFlight, RequestMetrics};

static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// One worker's observers.
pub(crate) struct Observe {
    metrics: Option<RequestMetrics>,
    log: Option<WorkerLog>,
    worker: usize,
    wall: Wall,
}

/// The wall clock, read off the monotonic clock the request path reads
/// anyway: the Unix time at an anchor `Instant`, taken again once a second.
/// A request's start time is then two subtractions, where reading the
/// system clock for it cost a clock read and two (~150 instructions a
/// request, measured). A step of the system clock shows within a second.
struct Wall {
    /// None until the first request, which starts the first tick.
    anchor: Cell<Option<(Instant, Duration)>>,
}

/// How often the anchor is taken again; also how often the VM's heap is
/// sampled for the metrics.
const TICK: Duration = Duration::from_secs(1);

impl Wall {
    fn new() -> Wall {
        Wall {
            anchor: Cell::new(None),
        }
    }

    /// The Unix time at `now` (a fresh reading), and whether a new tick
    /// started with it (the anchor was taken again).
    #[inline]
    fn at(&self, now: Instant) -> (Duration, bool) {
        if let Some((at, unix)) = self.anchor.get() {
            let since = now.saturating_duration_since(at);
            if since < TICK {
                return (unix + since, false);
            }
        }
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        self.anchor.set(Some((now, unix)));
        (unix, true)
    }
}

/// A request being observed: what its start said.
pub(crate) struct Seen<'a> {
    at: Instant,
    /// The route that matched, if one did.
    pub(crate) route: Option<HandlerId>,
    _in_flight: Option<InFlight<'a>>,
    /// For the access log: the headers it records, which the app takes
    /// with the rest of the head.
    heard: Option<Heard>,
}

struct Heard {
    request_id: Option<HeaderValue>,
    referer: Option<HeaderValue>,
    user_agent: Option<HeaderValue>,
}

impl Heard {
    /// One pass over the head's few headers: three lookups, each hashing
    /// its name, made `begin` cost 525 instructions, the walk 167
    /// (measured, both logs and metrics on).
    fn of(head: &Parts) -> Heard {
        let mut heard = Heard {
            request_id: None,
            referer: None,
            user_agent: None,
        };
        for (name, value) in &head.headers {
            let slot = if name == REFERER {
                &mut heard.referer
            } else if name == USER_AGENT {
                &mut heard.user_agent
            } else if name == X_REQUEST_ID {
                &mut heard.request_id
            } else {
                continue;
            };
            // The first of repeated headers, as `HeaderMap::get` gives.
            if slot.is_none() {
                *slot = Some(value.clone());
            }
        }
        heard
    }
}

impl Observe {
    /// This worker's observers (`log` is the access log, if it is on), if
    /// any is on.
    pub(crate) fn for_this_worker(log: Option<&AccessLog>) -> Option<Box<Observe>> {
        let metrics = metrics::for_this_worker();
        if metrics.is_none() && log.is_none() {
            return None;
        }
        let worker = cove_core::audit::context().worker.unwrap_or(0) as usize;
        Some(Box::new(Observe {
            metrics,
            log: log.map(AccessLog::worker),
            worker,
            wall: Wall::new(),
        }))
    }

    /// A request with `head` has started.
    #[inline(never)]
    pub(crate) fn begin(&self, head: &Parts) -> Seen<'_> {
        Seen {
            at: Instant::now(),
            route: None,
            _in_flight: self.metrics.as_ref().map(RequestMetrics::start),
            heard: self.log.as_ref().map(|_| Heard::of(head)),
        }
    }

    /// The request of `seen` (`head`, from `peer`) is answered with
    /// `res`; `heap` reads the VM's heap size (called at most once a
    /// second, and on the first request).
    pub(crate) fn end(
        &self,
        seen: &Seen<'_>,
        head: &Parts,
        peer: SocketAddr,
        res: &mut HttpResponse,
        routes: &RouteTable,
        heap: impl FnOnce() -> usize,
    ) {
        let now = Instant::now();
        let took = now.saturating_duration_since(seen.at);
        let (unix_now, ticked) = self.wall.at(now);
        let status = res.status().as_u16();
        if let Some(m) = &self.metrics {
            if ticked {
                m.set_heap(heap());
            }
            m.finish(
                routes,
                seen.route,
                head.method.as_str(),
                status,
                took.as_secs_f64(),
            );
        }
        if let (Some(log), Some(heard)) = (&self.log, &seen.heard) {
            let started = unix_now.saturating_sub(took);
            self.log_line(log, heard, seen, head, peer, res, routes, started, took);
        }
    }

    /// The access log's line for the request.
    ///
    /// The id is not sent back in a response header: inserting one more
    /// header into the response's map cost ~700 instructions a request
    /// (measured), half of what the line costs. A client or proxy that
    /// sends `X-Request-ID` finds its own id in the line.
    #[allow(clippy::too_many_arguments)]
    fn log_line(
        &self,
        log: &WorkerLog,
        heard: &Heard,
        seen: &Seen<'_>,
        head: &Parts,
        peer: SocketAddr,
        res: &HttpResponse,
        routes: &RouteTable,
        started: Duration,
        took: Duration,
    ) {
        let entry = Entry {
            time: started,
            remote: Some(peer),
            method: head.method.as_str(),
            target: head.uri.path_and_query().map_or("/", |p| p.as_str()),
            version: head.version,
            status: res.status().as_u16(),
            bytes: res.body().size_hint().exact(),
            duration: took,
            route: seen.route.and_then(|id| routes.pattern(id)),
            worker: self.worker,
            request_id: request_id::for_request(heard.request_id.as_ref()),
            referer: text(&heard.referer),
            user_agent: text(&heard.user_agent),
        };
        log.log(&entry);
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

/// A header's value as text: UTF-8 kept (`HeaderValue::to_str` refuses
/// anything but visible ASCII), anything else refused.
fn text(value: &Option<HeaderValue>) -> Option<&str> {
    // `utf8_lossy` checks for ASCII a word at a time first: `from_utf8`
    // cost ~100 instructions on a 7-byte user agent. A borrowed result is
    // the valid text; an owned one had bytes replaced.
    match cove_core::utf8_lossy(value.as_ref()?.as_bytes()) {
        Cow::Borrowed(s) => Some(s),
        Cow::Owned(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_logged_headers_are_found_in_one_pass_first_value_first() {
        let req = hyper::Request::builder()
            .header("host", "x")
            .header("User-Agent", "ua/1")
            .header("x-request-id", "r-1")
            .header("X-Request-Id", "r-2")
            .body(())
            .unwrap();
        let (head, ()) = req.into_parts();
        let heard = Heard::of(&head);
        assert_eq!(heard.user_agent.as_ref().unwrap(), "ua/1");
        assert_eq!(heard.request_id.as_ref().unwrap(), "r-1");
        assert!(heard.referer.is_none());
        assert_eq!(text(&heard.user_agent), Some("ua/1"));
        let utf8 = Some(HeaderValue::from_bytes("ünï".as_bytes()).unwrap());
        assert_eq!(text(&utf8), Some("ünï"));
        let latin1 = Some(HeaderValue::from_bytes(b"caf\xe9").unwrap());
        assert_eq!(text(&latin1), None);
        assert_eq!(text(&None), None);
    }
}
