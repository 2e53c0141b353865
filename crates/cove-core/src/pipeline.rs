//! Runs one request through pre-body middleware, post-body middleware and the
//! route handler (Hull §3.3). The server reads the body between the phases.

use crate::{Exchange, HandlerId, Response, Target};

/// What a middleware asked for: go on, or send the response as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// How far a pipeline run got: finished with a flow, or waiting for a job
/// whose output goes into [`Exchange::resume`] before running again.
#[derive(Debug)]
pub enum Step {
    Done(Flow),
    Wait(crate::Job),
}

/// A script error, already formatted as `file:line: message`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub message: String,
}

impl ScriptError {
    /// The limit this error reports, if it is a budget or heap-cap hit.
    pub fn limit_hit(&self) -> Option<crate::LimitHit> {
        crate::LimitHit::of(&self.message)
    }
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A loaded app on one worker: its route table, its script engine, and the
/// worker's database turn, which the server ends (group commit).
pub trait App {
    type Engine: Engine;
    type Turn: DbTurn;
    fn routes(&self) -> &crate::RouteTable;
    fn engine(&self) -> &Self::Engine;
    fn db_turn(&self) -> &Self::Turn;
}

/// A loaded app: its route table, the engine that runs its handlers, and the
/// worker's database connection as the server sees it (the engine holds it
/// too, for the scripts' statements).
pub struct ScriptApp<E, T> {
    pub routes: crate::RouteTable,
    pub engine: E,
    pub turn: T,
}

impl<E: Engine, T: DbTurn> App for ScriptApp<E, T> {
    type Engine = E;
    type Turn = T;
    fn routes(&self) -> &crate::RouteTable {
        &self.routes
    }
    fn engine(&self) -> &E {
        &self.engine
    }
    fn db_turn(&self) -> &T {
        &self.turn
    }
}

/// A script runtime bound to one worker. Calls are synchronous and never
/// re-entered; `State` carries per-request script objects between calls.
///
/// After each call (and resume) an engine that runs statements records in
/// [`Exchange::turn`] what the call left in the worker's database turn; the
/// server ends the turn through [`DbTurn`].
pub trait Engine {
    type State: Default;

    /// Bytes the VM's heap holds now, for the metrics (sampled at most once
    /// a second; may walk the heap). 0 when the engine cannot tell.
    fn heap_used(&self) -> usize {
        0
    }

    fn call(
        &self,
        handler: HandlerId,
        ex: &mut Exchange,
        state: &mut Self::State,
    ) -> Result<Flow, ScriptError>;

    /// Continue a call that suspended (it set [`Exchange::pending`]) with
    /// the job's output. Engines that never suspend need not implement it.
    fn resume(
        &self,
        _output: crate::JobOutput,
        _ex: &mut Exchange,
        _state: &mut Self::State,
    ) -> Result<Flow, ScriptError> {
        Err(ScriptError {
            message: "this runtime cannot resume a suspended call".into(),
        })
    }
}

/// A worker's database connection as the server sees it: what it holds open
/// until the end of the event-loop turn, and the group commit that ends it
/// (see cove-db). The server commits; the engine's calls only run
/// statements, noting in [`Exchange::turn`] which group they joined.
pub trait DbTurn {
    /// What the connection holds open until the end of the turn.
    fn turn_tx(&self) -> TurnTx;
    /// Commit the open write group and end the read snapshot; returns
    /// whether the group committed.
    fn commit_group(&self) -> bool;
    /// `Some(committed)` once `group` has finished, `None` while it is open.
    fn group_result(&self, group: u64) -> Option<bool>;
    /// Pause group commit and shared read snapshots (what is open is
    /// committed first), or resume them as they were. While a reload has two
    /// VMs on one worker thread, neither may hold the write lock across an
    /// await: the other's write would wait for it on the same thread.
    fn pause_group_commit(&self, paused: bool);
}

/// What a request's calls left in the worker's database turn, set by the
/// engine after each call (cove-db `Db::finish_call`) and read by the server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnUse {
    /// The latest write group this request's statements ran in. Its
    /// response must wait until that group has committed.
    pub touched: Option<u64>,
    /// The last call left a write group or read snapshot open.
    pub left_open: bool,
}

/// What a worker's database connection holds open until the end of the
/// event-loop turn (group commit and read snapshots, see cove-db).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnTx {
    None,
    /// A read snapshot the turn's reads share: end it once the requests
    /// that are ready now have run.
    Read,
    /// A write group: commit it after the next poll for I/O as well, so that
    /// the writes of requests arriving meanwhile join it.
    Write,
}

/// Call `id`, or resume the call that suspended on it.
fn call_or_resume<E: Engine>(
    engine: &E,
    id: HandlerId,
    ex: &mut Exchange,
    st: &mut E::State,
) -> Result<Flow, (ScriptError, bool)> {
    let result = match ex.resume.take() {
        // The job this call waited for may have noted a fault as it ended.
        Some(output) => engine.resume(output, ex, st),
        None => {
            crate::fault::clear();
            engine.call(id, ex, st)
        }
    };
    // Read (and forget) the note whatever the outcome: one the script
    // caught must not reach another request.
    let unavailable = crate::fault::take();
    result.map_err(|e| (e, unavailable))
}

/// Record a call's failure: 503 when a backend could not be reached, else 500.
fn failed(ex: &mut Exchange, (e, unavailable): (ScriptError, bool)) {
    ex.errors.push(e);
    if unavailable {
        ex.res.unavailable();
    } else {
        ex.res.fail();
    }
}

/// Run `ids` from the cursor on; stops at a suspension, keeping the cursor.
fn run_chain<E: Engine>(
    engine: &E,
    ids: &[HandlerId],
    ex: &mut Exchange,
    st: &mut E::State,
) -> Step {
    while let Some(&id) = ids.get(ex.cursor) {
        let result = call_or_resume(engine, id, ex, st);
        if let Some(job) = ex.pending.take() {
            return Step::Wait(job);
        }
        ex.cursor += 1;
        match result {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => return Step::Done(Flow::Stop),
            Err(e) => {
                failed(ex, e);
                return Step::Done(Flow::Stop);
            }
        }
    }
    ex.cursor = 0;
    Step::Done(Flow::Continue)
}

/// Pre-body middleware. `Done(Flow::Stop)` means the response is final.
pub fn run_pre<E: Engine>(engine: &E, ex: &mut Exchange, st: &mut E::State) -> Step {
    let ids = std::mem::take(&mut ex.plan.pre);
    let step = run_chain(engine, &ids, ex, st);
    ex.plan.pre = ids;
    step
}

/// Post-body middleware, then the handler (or the 404/405 response).
pub fn run_main<E: Engine>(engine: &E, ex: &mut Exchange, st: &mut E::State) -> Step {
    if !ex.at_handler {
        let ids = std::mem::take(&mut ex.plan.post);
        let step = run_chain(engine, &ids, ex, st);
        ex.plan.post = ids;
        match step {
            Step::Done(Flow::Continue) => ex.at_handler = true,
            other => return other,
        }
    }
    match &ex.plan.target {
        Target::Route { handler, .. } => {
            let handler = *handler;
            return run_handler(engine, handler, ex, st);
        }
        Target::Socket { handler, .. } => {
            if ex.res.socket_turn().is_some() {
                let handler = *handler;
                return run_handler(engine, handler, ex, st);
            }
            // The upgrade request itself: the server upgrades on this
            // `Continue`; a caller that cannot (`cove test`) answers 426.
            set_plain(&mut ex.res, Response::plain(426, UPGRADE_REQUIRED));
            return Step::Done(Flow::Continue);
        }
        Target::NotFound => set_plain(&mut ex.res, Response::plain(404, "Not Found")),
        Target::MethodNotAllowed(allowed) => {
            let allow = allowed.join(", ");
            set_plain(&mut ex.res, Response::plain(405, "Method Not Allowed"));
            ex.res.headers.push(("Allow".to_string(), allow));
        }
    }
    Step::Done(Flow::Stop)
}

/// What a request for a WebSocket endpoint gets when it is not upgraded.
pub const UPGRADE_REQUIRED: &str =
    "Upgrade Required: this is a WebSocket endpoint; connect with a WebSocket client";

/// Call (or resume) the route's handler, the request's last call.
#[inline]
fn run_handler<E: Engine>(
    engine: &E,
    handler: HandlerId,
    ex: &mut Exchange,
    st: &mut E::State,
) -> Step {
    let result = call_or_resume(engine, handler, ex, st);
    if let Some(job) = ex.pending.take() {
        return Step::Wait(job);
    }
    if let Err(e) = result {
        failed(ex, e);
    }
    Step::Done(Flow::Stop)
}

/// Drive `run` to the end, running jobs inline (for `cove test` and unit
/// tests, where stalling the thread is fine).
fn blocking<E: Engine>(
    engine: &E,
    ex: &mut Exchange,
    st: &mut E::State,
    run: fn(&E, &mut Exchange, &mut E::State) -> Step,
) -> Flow {
    loop {
        match run(engine, ex, st) {
            Step::Done(flow) => return flow,
            Step::Wait(job) => ex.resume = Some(job.run()),
        }
    }
}

/// [`run_pre`] with jobs run inline.
pub fn run_pre_blocking<E: Engine>(engine: &E, ex: &mut Exchange, st: &mut E::State) -> Flow {
    blocking(engine, ex, st, run_pre)
}

/// [`run_main`] with jobs run inline.
pub fn run_main_blocking<E: Engine>(engine: &E, ex: &mut Exchange, st: &mut E::State) {
    blocking(engine, ex, st, run_main);
}

/// Keep headers middleware added (CORS, request ids) on server responses.
fn set_plain(res: &mut Response, plain: Response) {
    res.status = plain.status;
    res.content_type = None;
    res.body_type = plain.body_type;
    res.body = plain.body;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Phase, Request, RouteTable};
    use std::cell::RefCell;

    /// An engine whose handlers are Rust closures, recording the call order.
    struct Fake {
        calls: RefCell<Vec<HandlerId>>,
        stop_at: Option<HandlerId>,
        fail_at: Option<HandlerId>,
    }

    impl Engine for Fake {
        type State = u32;
        fn call(
            &self,
            id: HandlerId,
            ex: &mut Exchange,
            st: &mut u32,
        ) -> Result<Flow, ScriptError> {
            self.calls.borrow_mut().push(id);
            *st += 1;
            ex.res.add_header("X-Seen", &id.to_string()).unwrap();
            if Some(id) == self.fail_at {
                return Err(ScriptError {
                    message: "app.lua:3: boom".into(),
                });
            }
            ex.res.text(format!("handler {id}, body {:?}", ex.req.body));
            Ok(if Some(id) == self.stop_at {
                Flow::Stop
            } else {
                Flow::Continue
            })
        }
    }

    fn run(
        stop_at: Option<HandlerId>,
        fail_at: Option<HandlerId>,
        method: &str,
        path: &str,
    ) -> (Vec<HandlerId>, Exchange) {
        let mut t = RouteTable::new();
        t.add_middleware(Phase::Pre, "*", "/*", 1).unwrap();
        t.add_middleware(Phase::Post, "*", "/*", 2).unwrap();
        t.add_route("GET", "/x", 9).unwrap();
        let engine = Fake {
            calls: RefCell::new(vec![]),
            stop_at,
            fail_at,
        };
        let mut ex = Exchange::new(Request::default(), t.plan(method, path));
        let mut st = 0;
        if run_pre_blocking(&engine, &mut ex, &mut st) == Flow::Continue {
            run_main_blocking(&engine, &mut ex, &mut st);
        }
        (engine.calls.into_inner(), ex)
    }

    #[test]
    fn runs_pre_post_then_handler() {
        let (calls, ex) = run(None, None, "GET", "/x");
        assert_eq!(calls, vec![1, 2, 9]);
        assert_eq!(ex.res.status, 200);
    }

    #[test]
    fn short_circuit_stops_the_chain() {
        assert_eq!(run(Some(1), None, "GET", "/x").0, vec![1]);
        assert_eq!(run(Some(2), None, "GET", "/x").0, vec![1, 2]);
    }

    #[test]
    fn middleware_error_is_a_500_and_stops() {
        let (calls, ex) = run(None, Some(1), "GET", "/x");
        assert_eq!(calls, vec![1]);
        assert_eq!(ex.res.status, 500);
        assert_eq!(&ex.res.body[..], b"Internal Server Error");
        assert_eq!(ex.errors[0].message, "app.lua:3: boom");
        assert_eq!(ex.res.headers.len(), 1, "headers set before the error stay");
    }

    #[test]
    fn handler_error_is_a_500() {
        let (_, ex) = run(None, Some(9), "GET", "/x");
        assert_eq!(ex.res.status, 500);
    }

    #[test]
    fn not_found_and_405_keep_middleware_headers() {
        let (calls, ex) = run(None, None, "GET", "/nope");
        assert_eq!(calls, vec![1, 2]);
        assert_eq!((ex.res.status, &ex.res.body[..]), (404, &b"Not Found"[..]));
        assert_eq!(ex.res.headers.len(), 2);
        let (_, ex) = run(None, None, "POST", "/x");
        assert_eq!(ex.res.status, 405);
        assert!(ex
            .res
            .headers
            .contains(&("Allow".to_string(), "GET".to_string())));
    }

    #[test]
    fn a_socket_request_runs_its_middleware_and_leaves_the_upgrade_to_the_server() {
        let mut t = RouteTable::new();
        t.add_middleware(Phase::Pre, "*", "/*", 1).unwrap();
        t.add_middleware(Phase::Post, "*", "/*", 2).unwrap();
        t.add_socket("/chat", 9).unwrap();
        let engine = Fake {
            calls: RefCell::new(vec![]),
            stop_at: None,
            fail_at: None,
        };
        let (mut ex, mut st) = (Exchange::new(Request::default(), t.plan("GET", "/chat")), 0);
        assert_eq!(run_pre_blocking(&engine, &mut ex, &mut st), Flow::Continue);
        assert_eq!(
            blocking(&engine, &mut ex, &mut st, run_main),
            Flow::Continue
        );
        assert_eq!(engine.calls.borrow().as_slice(), [1, 2]);
        assert_eq!(ex.res.status, 426);
        assert_eq!(&ex.res.body[..], UPGRADE_REQUIRED.as_bytes());
        // An event of the connection calls the endpoint's handler alone.
        let mut plan = t.plan("GET", "/chat");
        (plan.pre, plan.post) = (vec![], vec![]);
        let mut ex = Exchange::new(Request::default(), plan);
        ex.res.start_socket_turn(1, crate::WsEvent::Open);
        assert_eq!(blocking(&engine, &mut ex, &mut st, run_main), Flow::Stop);
        assert_eq!(engine.calls.borrow().as_slice(), [1, 2, 9]);
    }

    /// Suspends once on `id`, then finishes with the job's output as body.
    struct Suspender {
        id: HandlerId,
        calls: RefCell<Vec<String>>,
    }

    impl Engine for Suspender {
        type State = ();
        fn call(&self, id: HandlerId, ex: &mut Exchange, _: &mut ()) -> Result<Flow, ScriptError> {
            self.calls.borrow_mut().push(format!("call {id}"));
            if id == self.id {
                ex.pending = Some(crate::Job::new(|| "from the job".to_string()));
            }
            Ok(Flow::Continue)
        }
        fn resume(
            &self,
            out: crate::JobOutput,
            ex: &mut Exchange,
            _: &mut (),
        ) -> Result<Flow, ScriptError> {
            let text = out.downcast::<String>().map_err(|_| ScriptError {
                message: "wrong output".into(),
            })?;
            self.calls.borrow_mut().push(format!("resume {text}"));
            ex.res.text(text.into_bytes());
            Ok(Flow::Continue)
        }
    }

    #[test]
    fn a_suspended_call_resumes_where_it_stopped() {
        for (id, expected) in [
            (1, vec!["call 1", "resume from the job", "call 2", "call 9"]),
            (2, vec!["call 1", "call 2", "resume from the job", "call 9"]),
            (9, vec!["call 1", "call 2", "call 9", "resume from the job"]),
        ] {
            let mut t = RouteTable::new();
            t.add_middleware(Phase::Pre, "*", "/*", 1).unwrap();
            t.add_middleware(Phase::Post, "*", "/*", 2).unwrap();
            t.add_route("GET", "/x", 9).unwrap();
            let engine = Suspender {
                id,
                calls: RefCell::new(vec![]),
            };
            let mut ex = Exchange::new(Request::default(), t.plan("GET", "/x"));
            let mut waits = 0;
            let mut step = run_pre(&engine, &mut ex, &mut ());
            while let Step::Wait(job) = step {
                waits += 1;
                ex.resume = Some(job.run());
                step = run_pre(&engine, &mut ex, &mut ());
            }
            assert!(matches!(step, Step::Done(Flow::Continue)));
            let mut step = run_main(&engine, &mut ex, &mut ());
            while let Step::Wait(job) = step {
                waits += 1;
                ex.resume = Some(job.run());
                step = run_main(&engine, &mut ex, &mut ());
            }
            assert_eq!(waits, 1);
            assert_eq!(*engine.calls.borrow(), expected, "suspending on {id}");
        }
    }
}
