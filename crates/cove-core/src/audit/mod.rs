//! The audit log (`--audit`, `COVE_AUDIT=1`, Hull's `HULL_AUDIT=1`; Hull
//! §11.4): one JSON line on stderr for each use of a capability that
//! reaches outside the script — env reads, outbound http and smtp, the
//! stdlib's writes to its reserved tables, crypto with keys, the kernel
//! sandbox. The capabilities (cove-caps, cove-db) write the lines, so both
//! runtimes log the same; the format is in docs/security.md, "Audit log".
//!
//! Each line names the worker and the request it was made for. A worker
//! interleaves requests (a handler that waits on an outbound request lets
//! others run), so the server enters a request's [`RequestScope`] around
//! every piece of script code it runs for it, not only at the start, and
//! work that finishes on another thread carries the [`Context`] captured
//! where the script asked for it.

mod event;
#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use event::Event;

static ON: AtomicBool = AtomicBool::new(false);

/// Whether audit lines are written. Every capability asks this first, so
/// with the log off the request path pays one relaxed load per use.
#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Write audit lines from now on (at start, before any worker loads the
/// app, so load-time env reads are logged too).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// Hull's switch: `HULL_AUDIT` set to exactly `1` (Hull §1.2).
pub fn hull_env_asks() -> bool {
    std::env::var_os("HULL_AUDIT").is_some_and(|v| v == "1")
}

/// A request's id, shared by its scope and the thread's current slot, so an
/// id the app sets mid-request ([`adopt_request_id`]) stays for the rest.
type Slot = RefCell<Arc<str>>;

thread_local! {
    static WORKER: Cell<Option<u32>> = const { Cell::new(None) };
    static CURRENT: RefCell<Option<Rc<Slot>>> = const { RefCell::new(None) };
    /// Requests this thread has numbered (generated ids).
    static SERIAL: Cell<u64> = const { Cell::new(0) };
}

/// Mark this thread as worker `n` (0-based): its lines carry `"worker": n`.
pub fn set_worker(n: usize) {
    WORKER.with(|w| w.set(u32::try_from(n).ok()));
}

/// Who a capability use is for: the worker, and the request its script
/// code was running for (`None` while the app loads). `Send`, so work that
/// finishes on the blocking pool logs under the request that started it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    pub worker: Option<u32>,
    pub request_id: Option<Arc<str>>,
}

/// This thread's [`Context`] now.
pub fn context() -> Context {
    Context {
        worker: WORKER.with(Cell::get),
        request_id: CURRENT.with(|c| c.borrow().as_ref().map(|slot| slot.borrow().clone())),
    }
}

/// One request's place in the log: made when it arrives (only with the log
/// on), entered around each piece of script code run for it.
#[derive(Debug)]
pub struct RequestScope {
    slot: Rc<Slot>,
}

impl RequestScope {
    /// A scope with a generated id, `w<worker>-<n>` (`n` counts this
    /// worker's requests, in hex), until the app sets `X-Request-ID`.
    /// Client-sent `X-Request-ID` headers are not taken: a client could
    /// make its requests look like someone else's.
    #[allow(clippy::new_without_default)] // Each call makes a new id.
    #[cold]
    #[inline(never)] // Kept out of the request path while the log is off.
    pub fn new() -> RequestScope {
        let n = SERIAL.with(|s| {
            s.set(s.get() + 1);
            s.get()
        });
        let worker = WORKER.with(Cell::get).unwrap_or(0);
        let id: Arc<str> = format!("w{worker}-{n:x}").into();
        RequestScope {
            slot: Rc::new(RefCell::new(id)),
        }
    }

    /// The id its lines carry now.
    pub fn id(&self) -> Arc<str> {
        self.slot.borrow().clone()
    }

    /// Attribute this thread's capability uses to this request until the
    /// guard drops.
    pub fn enter(&self) -> Entered {
        let before = CURRENT.with(|c| c.borrow_mut().replace(self.slot.clone()));
        Entered { before }
    }
}

/// While it lives, this thread's capability uses belong to one request.
#[must_use = "the scope ends when this guard drops"]
pub struct Entered {
    before: Option<Rc<Slot>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let before = self.before.take();
        CURRENT.with(|c| *c.borrow_mut() = before);
    }
}

/// The app gave its response an `X-Request-ID` (the logger middleware
/// does): from now on the current request's lines carry that id, so they
/// match the response and the app's own log. Outside a request, nothing.
pub fn adopt_request_id(id: &str) {
    CURRENT.with(|c| {
        if let Some(slot) = c.borrow().as_ref() {
            *slot.borrow_mut() = id.into();
        }
    });
}
