//! Loading an app into a worker's QuickJS runtime and running its handlers.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use rquickjs::promise::PromiseState;
use rquickjs::{Context, Ctx, Function, Module, Object, Persistent, Promise, Runtime, Value};

use cove_caps::{Csp, Registered, Shared};
use cove_core::{
    Engine, Exchange, Flow, HandlerId, Job, JobOutput, ScriptApp, ScriptConfig, ScriptError,
};
use cove_db::{Db, SharedDb};

use crate::error::{describe, describe_rejection, PRELUDE_NAME};
use crate::host::{begin_call, end_call, release_call, set_req_id, settle_job, Finish, Host};
use crate::modules::{AppLoader, AppResolver, NativeObjects};
use crate::raw::held::{self, hold, Held};
use crate::raw::value::Val;
use crate::vm::{new_runtime, Budget};

const PRELUDE: &str = include_str!("prelude.js");
/// The export names of the module objects the prelude returns, in its order.
const PRELUDE_MODULES: [&str; 1] = ["app"];

/// Where the app lives and how it is limited.
pub type JsConfig = ScriptConfig;

/// A loaded JavaScript app: its routes and the engine that runs them.
pub type JsApp = ScriptApp<JsEngine, SharedDb>;

/// Runs handlers by id in one QuickJS runtime. Field order is drop order:
/// every JS value goes before the context and runtime that own it.
pub struct JsEngine {
    handlers: Vec<Held<Function<'static>>>,
    /// The prelude's `res`, one per worker.
    res: Held<Object<'static>>,
    /// `Req.prototype`: every request's `req` is made from it.
    req_proto: Held<Object<'static>>,
    /// The last two `req`s made, kept alive one request longer than their
    /// own: the shapes of the fields they gained on read (such as `params`)
    /// then stay cached, so the next `req` gains the same fields without
    /// building new shapes.
    recent: RefCell<[Option<Persistent<Value<'static>>>; 2]>,
    host: Rc<Host>,
    csp: Rc<Csp>,
    pub(crate) budget: Arc<Budget>,
    pub(crate) context: Context,
    runtime: Runtime,
}

impl Drop for JsEngine {
    fn drop(&mut self) {
        // A call left behind by a panic may hold a JS value (template.rs
        // `Rendered`): freed now, while the runtime still exists.
        release_call();
    }
}

/// Per-request script state.
#[derive(Default)]
pub struct ReqState {
    started: bool,
    /// This request's `req`, made by its first call and passed to every
    /// call (a request that waited may run its next call after another
    /// request made its own).
    req: Option<Held<Value<'static>>>,
    /// The address of this request's `req` object (see host.rs `Call`).
    req_id: usize,
    has_body: bool,
    /// The handler's promise while it awaits blocking work.
    waiting: Option<Waiting>,
}

/// A handler suspended on an awaited job: its promise, and how to settle the
/// promise the job's caller awaits.
struct Waiting {
    promise: Persistent<Promise<'static>>,
    finish: Finish,
    resolve: Persistent<Function<'static>>,
    reject: Persistent<Function<'static>>,
}

/// How a script call ended.
enum Outcome {
    Done(Flow),
    /// Suspended: the handler's promise waits on this job.
    Wait(Job),
}

/// Run queued promise jobs (async handlers continue here).
pub(crate) fn drain_jobs(ctx: &Ctx<'_>) {
    while ctx.execute_pending_job() {}
}

/// Evaluate the prelude; returns `res` and `Req.prototype`, and stores the
/// module objects.
fn install<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
    shared: &Shared,
) -> rquickjs::Result<(Object<'js>, Object<'js>)> {
    crate::json::register_protos(ctx)?;
    crate::raw::shapes::init(ctx, &crate::req::FIELDS)?;
    // The capability modules first: the prelude adds `db.batch` and
    // `db.dialect` to the table's `db`, and to the stdlib's.
    let objects: NativeObjects = Object::new(ctx.clone())?;
    crate::caps::install(ctx, host, &shared.kv, &objects)?;
    let raw = crate::globals::raw_object(ctx, host)?;
    raw.set("db", objects.get::<_, Object>("db")?)?;
    raw.set("app", objects.get::<_, Object>("app")?)?;
    raw.set("dbStdlib", crate::caps::stdlib_db(ctx)?)?;
    let opts = {
        let mut o = rquickjs::context::EvalOptions::default();
        o.filename = Some(PRELUDE_NAME.into());
        o.strict = true;
        o.global = true;
        o
    };
    let setup: Function = ctx.eval_with_options(PRELUDE, opts)?;
    let out: Object = setup.call((raw,))?;
    let modules: rquickjs::Array = out.get("modules")?;
    for (name, obj) in PRELUDE_MODULES.iter().zip(modules.iter::<Object>()) {
        objects.set(*name, obj?)?;
    }
    objects.set(
        crate::modules::STDLIB_DB_EXPORT,
        out.get::<_, Object>("stdlibDb")?,
    )?;
    objects.set(crate::bind::COVE_ERROR, out.get::<_, Object>("CoveError")?)?;
    crate::caps::install_console(ctx, &objects)?;
    objects.set("template", crate::template::module(ctx)?)?;
    ctx.store_userdata(objects)
        .map_err(|_| rquickjs::Error::new_from_js("userdata", "hull modules"))?;
    Ok((out.get("res")?, out.get("reqProto")?))
}

/// Evaluate the entry module (and what it imports), running top-level await.
pub(crate) fn run_entry(
    ctx: &Ctx<'_>,
    name: &str,
    source: Vec<u8>,
    budget: &Budget,
) -> Result<(), String> {
    let source = crate::typescript::prepare(name, source).map_err(|e| e.describe(name))?;
    let promise =
        Module::evaluate(ctx.clone(), name, source).map_err(|e| describe(ctx, e, budget))?;
    drain_jobs(ctx);
    settle(ctx, &promise, budget, "the app file").map(drop)
}

/// The outcome of a promise after the job queue ran dry.
pub(crate) fn settle<'js>(
    ctx: &Ctx<'js>,
    p: &Promise<'js>,
    budget: &Budget,
    what: &str,
) -> Result<Value<'js>, String> {
    match p.state() {
        PromiseState::Resolved => match p.result::<Value>() {
            Some(r) => r.map_err(|e| describe(ctx, e, budget)),
            None => Ok(Value::new_undefined(ctx.clone())),
        },
        PromiseState::Rejected => {
            let reason = match p.result::<Value>() {
                Some(Err(rquickjs::Error::Exception)) => ctx.catch(),
                Some(Ok(v)) => v,
                _ => Value::new_undefined(ctx.clone()),
            };
            Err(describe_rejection(ctx, &reason, budget))
        }
        PromiseState::Pending if budget.exceeded() => Err(budget.message()),
        PromiseState::Pending => Err(format!(
            "{what} returned a promise that never settled; Cove has no timers, so await only work that completes within the request"
        )),
    }
}

impl JsEngine {
    /// Run the app file once and collect what it registered. Errors come
    /// back as `file:line: message`.
    pub fn load(config: &JsConfig, db: Db, shared: &Shared) -> Result<JsApp, String> {
        let display = config.display_name();
        let source = config
            .files
            .read(&config.entry)
            .map_err(|e| format!("{display}: cannot read the app file: {e}"))?
            .into_owned();
        let (runtime, context, budget) =
            new_runtime(&config.limits).map_err(|e| format!("cannot start QuickJS: {e}"))?;
        runtime.set_loader(
            AppResolver {
                files: config.files.clone(),
            },
            AppLoader {
                files: config.files.clone(),
            },
        );
        let mut db = db;
        db.set_group_commit(config.group_commit);
        let host = Rc::new(Host::new(SharedDb::new(db)));

        let loaded = context.with(|ctx| {
            let (res, req_proto) =
                install(&ctx, &host, shared).map_err(|e| describe(&ctx, e, &budget))?;
            crate::raw::shapes::keep_empty(&ctx, &req_proto);
            budget.reset();
            let entry = run_entry(&ctx, &display, source, &budget);
            let saved = (hold(&ctx, res), hold(&ctx, req_proto));
            Ok::<_, String>((saved, entry))
        });
        host.db.borrow_mut().finish_load();
        let registered = host.registry.borrow_mut().finish();
        let ((res, req_proto), entry) = loaded?;
        entry?;
        let Registered {
            routes,
            handlers,
            csp,
        } = registered.require_routes(&display, r#"app.get("/", (req, res) => res.text("hi"))"#)?;
        let handlers = context.with(|ctx| {
            handlers
                .into_iter()
                .map(|h| Held::from_persistent(&ctx, h))
                .collect()
        });
        let turn = host.db.clone();
        let engine = JsEngine {
            handlers,
            res,
            req_proto,
            recent: RefCell::default(),
            host,
            csp: Rc::new(csp),
            budget,
            context,
            runtime,
        };
        // Awaited work the app file started but did not wait for.
        engine.context.with(|ctx| engine.run_orphans(&ctx));
        Ok(ScriptApp {
            routes,
            engine,
            turn,
        })
    }
}

/// Hull: a non-zero number (`ToInt32`) or `true` short-circuits.
fn flow_of(v: &Value<'_>) -> Flow {
    let stop = if let Some(i) = v.as_int() {
        i != 0
    } else if let Some(f) = v.as_float() {
        f.is_finite() && f.trunc().rem_euclid(4_294_967_296.0) != 0.0
    } else {
        v.as_bool() == Some(true)
    };
    if stop {
        Flow::Stop
    } else {
        Flow::Continue
    }
}

impl JsEngine {
    fn run<'js>(
        &self,
        ctx: &Ctx<'js>,
        id: HandlerId,
        st: &mut ReqState,
        body_read: bool,
    ) -> Result<Outcome, String> {
        let fail = |e| describe(ctx, e, &self.budget);
        let handler = self
            .handlers
            .get(id as usize)
            .ok_or_else(|| format!("no handler {id}"))?;
        if st.req.is_none() {
            let req = held::new_object(ctx, self.req_proto.raw()).map_err(fail)?;
            st.req_id = Val::lend(&req).object_id();
            set_req_id(st.req_id);
            crate::req::define_eager(ctx, &req).map_err(fail)?;
            let kept = hold(ctx, req);
            let mut recent = self.recent.borrow_mut();
            recent[1] = recent[0].replace(kept.persistent().clone());
            st.req = Some(kept);
        } else if body_read {
            // Pre-body middleware saw `body` as null: built again on read.
            let req = st.req.as_ref().map(|r| r.persistent().clone());
            if let Some(req) = req {
                if let Some(req) = req.restore(ctx).map_err(fail)?.into_object() {
                    req.remove("body").map_err(fail)?;
                }
            }
        }
        let req = st.req.as_ref().ok_or("no req")?.raw();
        let ret = held::call2(ctx, handler.raw(), req, self.res.raw()).map_err(fail)?;
        drain_jobs(ctx);
        self.outcome(ctx, ret, st)
    }

    /// The flow of a handler's return value; a promise still pending on an
    /// awaited job suspends the call instead.
    fn outcome<'js>(
        &self,
        ctx: &Ctx<'js>,
        ret: Value<'js>,
        st: &mut ReqState,
    ) -> Result<Outcome, String> {
        // A handler usually returns nothing: a tag check, where
        // `as_promise` (`type_of`) costs ~30 instructions.
        let promise = || ret.is_object().then(|| ret.as_promise()).flatten();
        if let Some(p) = promise() {
            if p.state() == PromiseState::Pending && !self.budget.exceeded() {
                let next = self.host.jobs.borrow_mut().pop_front();
                if let Some(awaited) = next {
                    st.waiting = Some(Waiting {
                        promise: Persistent::save(ctx, p.clone()),
                        finish: awaited.finish,
                        resolve: awaited.resolve,
                        reject: awaited.reject,
                    });
                    return Ok(Outcome::Wait(awaited.job));
                }
            }
        }
        // Work started but never awaited still runs (inline: rare, and its
        // result must not leak into the next request).
        self.run_orphans(ctx);
        let ret = match promise() {
            Some(p) => settle(ctx, p, &self.budget, "the handler")?,
            None => ret,
        };
        if self.budget.exceeded() {
            return Err(self.budget.message());
        }
        Ok(Outcome::Done(flow_of(&ret)))
    }

    /// The manifest the app declared while loading, as it wrote it
    /// (`cove build --sign` records it; `--verify-sig` compares it).
    pub fn manifest(&self) -> Option<serde_json::Value> {
        let registry = self.host.registry.borrow();
        registry.manifest().map(|m| m.raw.clone())
    }

    /// `cove test`: http and smtp stay unconfigured (Hull §9.1).
    pub(crate) fn disable_outbound(&self) {
        self.host.registry.borrow_mut().disable_outbound();
    }

    /// Run awaited jobs nobody waits for here, settling their promises.
    pub(crate) fn run_orphans(&self, ctx: &Ctx<'_>) {
        loop {
            let next = self.host.jobs.borrow_mut().pop_front();
            let Some(awaited) = next else { break };
            let output = awaited.job.run();
            let settled = awaited.resolve.restore(ctx).and_then(|resolve| {
                let reject = awaited.reject.restore(ctx)?;
                settle_job(ctx, resolve, reject, awaited.finish, output)
            });
            if settled.is_err() {
                ctx.catch();
            }
            drain_jobs(ctx);
        }
    }

    /// Settle the awaited promise with the job's output and see where the
    /// handler got to.
    fn resume_in<'js>(
        &self,
        ctx: &Ctx<'js>,
        output: JobOutput,
        st: &mut ReqState,
    ) -> Result<Outcome, String> {
        let fail = |e| describe(ctx, e, &self.budget);
        let waiting = st
            .waiting
            .take()
            .ok_or("resumed a call that was not suspended")?;
        let resolve = waiting.resolve.restore(ctx).map_err(fail)?;
        let reject = waiting.reject.restore(ctx).map_err(fail)?;
        settle_job(ctx, resolve, reject, waiting.finish, output).map_err(fail)?;
        drain_jobs(ctx);
        let promise = waiting.promise.restore(ctx).map_err(fail)?;
        self.outcome(ctx, promise.into_value(), st)
    }
}

impl Engine for JsEngine {
    fn heap_used(&self) -> usize {
        usize::try_from(self.runtime.memory_usage().malloc_size).unwrap_or(0)
    }

    type State = ReqState;

    fn call(
        &self,
        id: HandlerId,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        self.context.with(|ctx| self.call_in(&ctx, id, ex, st))
    }

    fn resume(
        &self,
        output: JobOutput,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        self.context
            .with(|ctx| self.resume_with(&ctx, output, ex, st))
    }
}

impl JsEngine {
    /// [`Engine::call`] inside a context the caller already entered (the
    /// test runner dispatches from within a running script).
    pub(crate) fn call_in(
        &self,
        ctx: &Ctx<'_>,
        id: HandlerId,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        let body_read = st.started && !st.has_body && ex.req.body.is_some();
        self.budget.reset();
        self.lend(ex, st, |st| self.run(ctx, id, st, body_read))
    }

    /// [`Engine::resume`] inside an entered context (the test runner).
    pub(crate) fn resume_with(
        &self,
        ctx: &Ctx<'_>,
        output: JobOutput,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        self.lend(ex, st, |st| self.resume_in(ctx, output, st))
    }

    /// Lend the request and the response to the natives for `f`, then note
    /// in `ex.turn` what it left in the worker's database turn; a
    /// suspension hands its job to the pipeline.
    fn lend(
        &self,
        ex: &mut Exchange,
        st: &mut ReqState,
        f: impl FnOnce(&mut ReqState) -> Result<Outcome, String>,
    ) -> Result<Flow, ScriptError> {
        cove_caps::cap::res::begin(&mut ex.res, &self.csp);
        begin_call(&mut ex.req, st.req_id);
        let result = f(st);
        end_call(&mut ex.req);
        cove_caps::cap::res::end(&mut ex.res);
        st.started = true;
        st.has_body = ex.req.body.is_some();
        self.host.db.borrow_mut().finish_call(&mut ex.turn);
        match result {
            Ok(Outcome::Done(flow)) => Ok(flow),
            Ok(Outcome::Wait(job)) => {
                ex.pending = Some(job);
                Ok(Flow::Continue)
            }
            Err(message) => Err(ScriptError { message }),
        }
    }
}
