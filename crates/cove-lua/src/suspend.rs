//! Suspending a Lua handler while slow work (a PBKDF2 hash, an outbound
//! http request, an smtp send) runs off the worker's thread, so the worker
//! keeps serving its other connections.
//!
//! A handler runs as a plain call — no coroutine, nothing extra per request.
//! The first time one calls a slow function it runs inline (stalling the
//! worker, as Hull always does) and the handler is marked; from then on that
//! handler runs as a coroutine, and the slow function yields a job to the
//! engine instead of running. The engine hands the job to the server and
//! resumes the coroutine with its result. An app whose manifest lists
//! outbound hosts runs every handler as a coroutine from the start
//! ([`Suspend::suspend_all`]): a network call is never run inline.
//!
//! A slow function is made by [`slow_function`] from one `prepare` closure:
//! it checks and converts the arguments on the worker's thread and returns
//! either a [`Start::Job`] (the blocking work and the [`Finish`] that turns
//! its output into Lua values) or, when there is nothing to wait for,
//! [`Start::Done`] with the results.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mlua::prelude::LuaThreadStatus as ThreadStatus;
use mlua::{AnyUserData, Function, Lua, MultiValue, Table, Thread, UserData, Value};

use cove_core::{HandlerId, Job, JobOutput};
use cove_db::Db;

use crate::error::describe;

/// Turns a job's output into the function's results, or the message to raise.
pub(crate) type Finish = fn(&Lua, JobOutput) -> mlua::Result<Result<MultiValue, String>>;

/// What a slow function's `prepare` decided.
pub(crate) enum Start {
    /// Blocking work, run off the thread when the handler can suspend.
    Job(Job, Finish),
    /// Nothing to wait for: the results (at most two values).
    Done(MultiValue),
}

/// The job a call prepared, between the wrapper's steps.
struct Pending(Option<(Job, Finish)>);

impl UserData for Pending {}

/// A handler waiting on a job: its coroutine and how to read the output.
pub(crate) struct Suspended {
    thread: Thread,
    finish: Finish,
}

/// The output of a job that made a `T`; a mismatch is an internal error.
pub(crate) fn output<T: 'static>(out: JobOutput) -> Result<T, String> {
    out.downcast::<T>()
        .map(|b| *b)
        .map_err(|_| "the background job failed".to_string())
}

/// Per-VM suspension state, kept in the Lua app data.
pub(crate) struct Suspend {
    /// The coroutine of the handler running now, if it runs as one.
    running: RefCell<Option<Thread>>,
    /// The handler (or middleware) being called.
    handler: Cell<Option<HandlerId>>,
    /// By handler id: whether it called a slow function (it then runs as a
    /// coroutine). Indexed, not hashed: this is read on every call.
    slow: RefCell<Vec<bool>>,
    /// Yielded first by slow functions, so other yields are told apart.
    marker: Table,
    /// Every handler runs as a coroutine from its first call (apps that
    /// list outbound hosts: a network call must not run inline even once).
    always: Cell<bool>,
}

/// How a call ended: finished with the dispatcher's results, or waiting.
pub(crate) enum Run {
    /// The dispatcher's `flow, req`.
    Done(Value, Option<Table>),
    Wait(Job, Suspended),
}

// How `prepare` and `run` report to the wrapper: raise the message, a
// prepared job to run or yield, or the results.
const RAISE: i64 = 0;
const JOB: i64 = 1;
const DONE: i64 = 2;

/// The wrapper around a slow function: yield the prepared job when running
/// as a suspendable handler, else mark the handler and run it inline.
/// Failures raise as strings positioned at the caller, like the prelude's.
const WRAPPER: &str = r#"
local prepare, run, can_suspend, mark_slow, yield, marker = ...
return function(...)
  local how, a, b = prepare(...)
  if how == 1 then
    if can_suspend() then
      how, a, b = yield(marker, a)
    else
      mark_slow()
      how, a, b = run(a)
    end
  end
  if how == 0 then
    error(a, 2)
  end
  return a, b
end
"#;

/// Create the state; the engine keeps one handle, the Lua callbacks another.
pub(crate) fn install(lua: &Lua) -> mlua::Result<Rc<Suspend>> {
    let st = Rc::new(Suspend {
        running: RefCell::new(None),
        handler: Cell::new(None),
        slow: RefCell::new(Vec::new()),
        marker: lua.create_table()?,
        always: Cell::new(false),
    });
    lua.set_app_data(st.clone());
    Ok(st)
}

fn state(lua: &Lua) -> mlua::Result<Rc<Suspend>> {
    lua.app_data_ref::<Rc<Suspend>>()
        .map(|st| st.clone())
        .ok_or_else(|| mlua::Error::runtime("suspension state missing"))
}

impl Suspend {
    /// Note which handler is being called (`None` after the call).
    pub(crate) fn set_handler(&self, id: Option<HandlerId>) {
        self.handler.set(id);
    }

    pub(crate) fn is_slow(&self, id: HandlerId) -> bool {
        self.always.get()
            || self
                .slow
                .borrow()
                .get(id as usize)
                .copied()
                .unwrap_or(false)
    }

    /// Run every handler as a coroutine from its first call. For apps that
    /// can reach the network (their manifest lists hosts): an http or smtp
    /// call may wait 30 s, too long to run inline even once per handler.
    /// Apps without hosts keep the plain calls until a password hash.
    pub(crate) fn suspend_all(&self) {
        self.always.set(true);
    }

    fn mark_slow(&self) {
        if let Some(id) = self.handler.get() {
            let mut slow = self.slow.borrow_mut();
            let i = id as usize;
            if slow.len() <= i {
                slow.resize(i + 1, false);
            }
            slow[i] = true;
        }
    }
}

fn raise(lua: &Lua, msg: &str) -> mlua::Result<MultiValue> {
    Ok(MultiValue::from_iter([
        Value::Integer(RAISE),
        Value::String(lua.create_string(msg)?),
    ]))
}

/// `finish`'s results as the wrapper reads them.
fn finished(lua: &Lua, finish: Finish, out: JobOutput) -> mlua::Result<MultiValue> {
    match finish(lua, out) {
        Ok(Ok(mut values)) => {
            values.push_front(Value::Integer(DONE));
            Ok(values)
        }
        Ok(Err(msg)) => raise(lua, &msg),
        Err(e) => raise(lua, &describe(&e)),
    }
}

/// A Lua function whose work may run off the worker's thread; `prepare`
/// errors raise at the caller.
pub(crate) fn slow_function<F>(lua: &Lua, prepare: F) -> mlua::Result<Function>
where
    F: Fn(&Lua, MultiValue) -> mlua::Result<Start> + 'static,
{
    let prepare = lua.create_function(move |lua, args: MultiValue| match prepare(lua, args) {
        Ok(Start::Job(job, finish)) => Ok(MultiValue::from_iter([
            Value::Integer(JOB),
            Value::UserData(lua.create_userdata(Pending(Some((job, finish))))?),
        ])),
        Ok(Start::Done(mut values)) => {
            values.push_front(Value::Integer(DONE));
            Ok(values)
        }
        Err(e) => raise(lua, &describe(&e)),
    })?;
    let run = lua.create_function(|lua, pending: AnyUserData| {
        let taken = pending.borrow_mut::<Pending>()?.0.take();
        match taken {
            Some((job, finish)) => finished(lua, finish, job.run()),
            None => raise(lua, "a slow function's job ran twice"),
        }
    })?;
    let can_suspend = lua.create_function(|lua, ()| {
        let st = state(lua)?;
        let inside = st.running.borrow().as_ref() == Some(&lua.current_thread());
        // A suspended script must not hold a transaction other requests would see.
        let in_batch = lua.app_data_ref::<Db>().is_some_and(|db| db.in_batch());
        Ok(inside && !in_batch)
    })?;
    let mark_slow = lua.create_function(|lua, ()| {
        state(lua)?.mark_slow();
        Ok(())
    })?;
    let coroutine: Table = lua.globals().raw_get("coroutine")?;
    let yield_fn: Function = coroutine.raw_get("yield")?;
    let marker = state(lua)?.marker.clone();
    lua.load(WRAPPER).set_name("=[cove]").call((
        prepare,
        run,
        can_suspend,
        mark_slow,
        yield_fn,
        marker,
    ))
}

/// Start `dispatch(args)` as a coroutine.
pub(crate) fn start(lua: &Lua, dispatch: &Function, args: MultiValue) -> mlua::Result<Run> {
    let thread = lua.create_thread(dispatch.clone())?;
    step(lua, thread, args)
}

/// Resume a suspended handler with its job's output.
pub(crate) fn resume(lua: &Lua, suspended: Suspended, output: JobOutput) -> mlua::Result<Run> {
    let args = finished(lua, suspended.finish, output)?;
    step(lua, suspended.thread, args)
}

fn step(lua: &Lua, thread: Thread, args: MultiValue) -> mlua::Result<Run> {
    *state(lua)?.running.borrow_mut() = Some(thread.clone());
    let result = thread.resume::<MultiValue>(args);
    *state(lua)?.running.borrow_mut() = None;
    let values = result?;
    if thread.status() != ThreadStatus::Resumable {
        let mut it = values.into_iter();
        let flow = it.next().unwrap_or(Value::Nil);
        let req = match it.next() {
            Some(Value::Table(t)) => Some(t),
            _ => None,
        };
        return Ok(Run::Done(flow, req));
    }
    let (job, finish) = job_of(lua, values)?;
    Ok(Run::Wait(job, Suspended { thread, finish }))
}

/// The job a slow function yielded: `marker, pending`.
fn job_of(lua: &Lua, values: MultiValue) -> mlua::Result<(Job, Finish)> {
    let mut it = values.into_iter();
    let marker = state(lua)?.marker.clone();
    match (it.next(), it.next()) {
        (Some(Value::Table(t)), Some(Value::UserData(pending))) if t == marker => pending
            .borrow_mut::<Pending>()?
            .0
            .take()
            .ok_or_else(|| mlua::Error::runtime("a slow function's job ran twice")),
        _ => Err(mlua::Error::runtime(
            "attempt to yield from outside a coroutine (a handler cannot yield)",
        )),
    }
}
