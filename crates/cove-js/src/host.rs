//! State the native functions share on one worker: the database, what the
//! app registered, and the request of the call in progress.

use std::cell::RefCell;
use std::collections::VecDeque;

use rquickjs::{Ctx, Exception, Function, Persistent, Promise, Value};

use cove_caps::Registry;
use cove_core::{Job, JobOutput, Request};
use cove_db::SharedDb;

/// The call in progress: the request parts the lazy `req` fields are made
/// from (the response being built is held by cove_caps::cap::res).
pub(crate) struct Call {
    pub(crate) req: Request,
    /// The address of this request's `req` object: its field getters refuse
    /// any other (a `req` kept past its request).
    pub(crate) req_id: usize,
    /// The page `template.render` made last in this call (template.rs).
    pub(crate) rendered: Option<Rendered>,
}

/// Turns an awaited job's output into the value its promise resolves with;
/// an error (a thrown exception) rejects it.
pub(crate) type Finish = for<'js> fn(&Ctx<'js>, JobOutput) -> rquickjs::Result<Value<'js>>;

/// Blocking work a script is awaiting (an `…Async` function): the job, how
/// to read its output, and the resolve/reject functions of its promise.
pub(crate) struct Awaited {
    pub(crate) job: Job,
    pub(crate) finish: Finish,
    pub(crate) resolve: Persistent<Function<'static>>,
    pub(crate) reject: Persistent<Function<'static>>,
}

pub(crate) struct Host {
    /// The worker's connection, shared with the server (group commit).
    pub(crate) db: SharedDb,
    pub(crate) registry: RefCell<Registry<Persistent<Function<'static>>>>,
    /// The prelude's maker of a WebSocket endpoint's dispatcher (`app.ws`).
    pub(crate) ws_dispatcher: RefCell<Option<Persistent<Function<'static>>>>,
    /// Jobs started by the running script, in start order.
    pub(crate) jobs: RefCell<VecDeque<Awaited>>,
}

impl Host {
    pub(crate) fn new(db: SharedDb) -> Host {
        Host {
            db,
            registry: RefCell::new(Registry::default()),
            ws_dispatcher: RefCell::new(None),
            jobs: RefCell::new(VecDeque::new()),
        }
    }
}

impl Host {
    /// Queue `job` (engine.rs suspends the handler awaiting it and the
    /// server runs it on its blocking pool); its output settles the promise.
    pub(crate) fn await_job<'js>(
        &self,
        ctx: &Ctx<'js>,
        job: Job,
        finish: Finish,
    ) -> rquickjs::Result<Promise<'js>> {
        let (promise, resolve, reject) = ctx.promise()?;
        self.jobs.borrow_mut().push_back(Awaited {
            job,
            finish,
            resolve: Persistent::save(ctx, resolve),
            reject: Persistent::save(ctx, reject),
        });
        Ok(promise)
    }
}

/// A promise settled now: with `result`'s value, or rejected with the
/// exception it threw.
pub(crate) fn settled<'js>(
    ctx: &Ctx<'js>,
    result: rquickjs::Result<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    let (promise, resolve, reject) = ctx.promise()?;
    settle_with(ctx, resolve, reject, result)?;
    Ok(promise)
}

fn settle_with<'js>(
    ctx: &Ctx<'js>,
    resolve: Function<'js>,
    reject: Function<'js>,
    result: rquickjs::Result<Value<'js>>,
) -> rquickjs::Result<()> {
    match result {
        Ok(v) => resolve.call((v,)),
        Err(rquickjs::Error::Exception) => reject.call((ctx.catch(),)),
        Err(e) => reject.call((Exception::from_message(ctx.clone(), &e.to_string())?,)),
    }
}

/// Settle an awaited job's promise with its output.
pub(crate) fn settle_job<'js>(
    ctx: &Ctx<'js>,
    resolve: Function<'js>,
    reject: Function<'js>,
    finish: Finish,
    output: JobOutput,
) -> rquickjs::Result<()> {
    settle_with(ctx, resolve, reject, finish(ctx, output))
}

thread_local! {
    /// The call in progress on this worker thread (one runtime per worker;
    /// calls never overlap). A thread-local rather than a `Host` field so the
    /// plain C functions of `req` reach it without captured state.
    static CALL: RefCell<Slot> = const { RefCell::new(Slot { call: None, lent: false }) };
}

/// The call lent by [`begin_call`]: made once, its request swapped in and
/// out (moved in and out, then dropped, it cost ~100 instructions a call).
struct Slot {
    call: Option<Call>,
    /// A call is in progress: [`begin_call`] ran and [`end_call`] did not yet.
    lent: bool,
}

impl Slot {
    fn current(&mut self) -> Option<&mut Call> {
        self.call.as_mut().filter(|_| self.lent)
    }
}

/// Lend `req` to the natives until [`end_call`], for the call whose `req`
/// object's address is `req_id`. Calls do not nest; a call a panic left
/// lent is over once this runs.
pub(crate) fn begin_call(req: &mut Request, req_id: usize) {
    CALL.with(|c| {
        let mut slot = c.borrow_mut();
        let call = slot.call.get_or_insert_with(|| Call {
            req: Request::default(),
            req_id: 0,
            rendered: None,
        });
        std::mem::swap(&mut call.req, req);
        call.req_id = req_id;
        call.rendered = None;
        slot.lent = true;
    });
}

/// Give back the request lent at [`begin_call`]; the page it rendered
/// last is let go.
pub(crate) fn end_call(req: &mut Request) {
    CALL.with(|c| {
        let mut slot = c.borrow_mut();
        if !slot.lent {
            return;
        }
        slot.lent = false;
        if let Some(call) = slot.call.as_mut() {
            std::mem::swap(&mut call.req, req);
            call.rendered = None;
        }
    });
}

/// Let go of what the slot holds (a JS value, template.rs `Rendered`), as
/// the runtime it belongs to closes.
pub(crate) fn release_call() {
    let call = CALL.with(|c| {
        let mut slot = c.borrow_mut();
        slot.lent = false;
        slot.call.take()
    });
    drop(call);
}

/// Record the address of the call's `req` object (made during the call).
pub(crate) fn set_req_id(id: usize) {
    CALL.with(|c| {
        if let Some(call) = c.borrow_mut().current() {
            call.req_id = id;
        }
    });
}

/// The page `template.render` returned last in the call in progress,
/// with its bytes: `res.html(page)` of that very string takes the bytes
/// instead of converting the string back to UTF-8 (a scan and a copy of the
/// whole page). The reference held keeps the string alive, so no other
/// string can have its address while this is kept. template.rs makes it.
pub(crate) struct Rendered {
    pub(crate) _page: rquickjs::Persistent<rquickjs::String<'static>>,
    pub(crate) ptr: usize,
    pub(crate) text: String,
}

/// Run `f` on the call in progress if there is one (`None` if not).
pub(crate) fn if_call<R>(f: impl FnOnce(&mut Call) -> R) -> Option<R> {
    CALL.with(|c| c.borrow_mut().current().map(f))
}

/// Run `f` on the call in progress, or fail with a message naming
/// `object.api` (formatted only then: this is on every request's path).
pub(crate) fn with_call<R>(
    object: &str,
    api: &str,
    f: impl FnOnce(&mut Call) -> Result<R, String>,
) -> Result<R, String> {
    CALL.with(|c| match c.borrow_mut().current() {
        Some(call) => f(call),
        None => Err(format!(
            "{object}.{api}: this request has ended; use req and res only inside their own handler"
        )),
    })
}
