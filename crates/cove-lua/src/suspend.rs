//! Suspending a Lua handler while slow work (a PBKDF2 hash, an outbound
//! http request, an smtp send) runs off the worker's thread, so the worker
//! keeps serving its other connections.
//!
//! Every handler (and middleware) call runs as a coroutine, so its first
//! slow call can already suspend: the slow function yields a job to the
//! engine instead of running, the engine hands the job to the server and
//! resumes the coroutine with its result. Coroutines are reused: a call
//! takes the VM's idle one (`Suspend::spare`) and gives it back when it
//! ends, so a call that never waits costs a `lua_resume` more than a plain
//! call (~290 instructions, see docs/architecture.md), not a new thread. A
//! slow function still runs inline where yielding is not allowed: inside `db.batch` (a suspended
//! script must not hold a transaction), inside the script's own coroutines,
//! and outside handlers (loading the app, tests calling functions directly).
//!
//! A slow function is made by [`slow_function`] from one `prepare` closure:
//! it checks and converts the arguments on the worker's thread and returns
//! either a [`Start::Job`] (the blocking work and the [`Finish`] that turns
//! its output into Lua values) or, when there is nothing to wait for,
//! [`Start::Done`] with the results.

use std::cell::Cell;
use std::ffi::c_void;
use std::rc::Rc;

use mlua::prelude::LuaThreadStatus as ThreadStatus;
use mlua::{AnyUserData, Function, Lua, MultiValue, Table, UserData, Value};

use cove_core::{Job, JobOutput};

use crate::error::describe;
use crate::raw::budget::Running;
use crate::raw::coroutine::{self, Call, Coroutine, Resumed};

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
    thread: Coroutine,
    finish: Finish,
}

/// Per-VM suspension state, kept in the Lua app data.
pub(crate) struct Suspend {
    /// The coroutine of the handler running now (its address), or null.
    running: Cell<*const c_void>,
    /// A finished coroutine kept for the next call. One serves every call
    /// that does not wait; a call that starts while another waits makes a
    /// new one, and of several that finish the last is kept.
    spare: Cell<Option<Coroutine>>,
    /// Yielded first by slow functions, so other yields are told apart.
    marker: Table,
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
/// as a handler's coroutine, else run it inline.
/// Failures raise as strings positioned at the caller, like the prelude's.
const WRAPPER: &str = r#"
local prepare, run, can_suspend, yield, marker = ...
return function(...)
  local how, a, b = prepare(...)
  if how == 1 then
    if can_suspend() then
      how, a, b = yield(marker, a)
    else
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
        running: Cell::new(std::ptr::null()),
        spare: Cell::new(None),
        marker: lua.create_table()?,
    });
    lua.set_app_data(st.clone());
    Ok(st)
}

fn state(lua: &Lua) -> mlua::Result<Rc<Suspend>> {
    lua.app_data_ref::<Rc<Suspend>>()
        .map(|st| st.clone())
        .ok_or_else(|| mlua::Error::runtime("suspension state missing"))
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
        let inside = st.running.get() == lua.current_thread().to_pointer();
        // A suspended script must not hold a transaction other requests would see.
        let in_batch = lua
            .app_data_ref::<crate::bind::DbCell>()
            .is_some_and(|db| db.borrow().in_batch());
        Ok(inside && !in_batch)
    })?;
    let coroutine: Table = lua.globals().raw_get("coroutine")?;
    let yield_fn: Function = coroutine.raw_get("yield")?;
    let marker = state(lua)?.marker.clone();
    lua.load(WRAPPER)
        .set_name("=[cove]")
        .call((prepare, run, can_suspend, yield_fn, marker))
}

/// Call the prelude's dispatcher (see [`coroutine::dispatch_in`]) as a coroutine.
pub(crate) fn start(lua: &Lua, st: &Suspend, call: Call<'_>) -> mlua::Result<Run> {
    let thread = match st.spare.take() {
        Some(t) => t,
        None => coroutine::coroutine(lua, call.dispatch)?,
    };
    // Calls can nest (a test calling the app): restore the outer one's.
    let outer = st.running.replace(thread.address());
    let resumed = Running::with(&thread, || coroutine::dispatch_in(lua, &thread, call));
    st.running.set(outer);
    // A coroutine that raised is dropped: it cannot run again.
    match resumed? {
        Resumed::Done(flow, req) => {
            st.spare.set(Some(thread));
            Ok(Run::Done(flow, req))
        }
        Resumed::Yielded => {
            let (a, b) = coroutine::take_yielded(lua, &thread)?;
            let (job, finish) = job_of(st, a, b)?;
            Ok(Run::Wait(job, Suspended { thread, finish }))
        }
    }
}

/// Resume a suspended handler with its job's output.
pub(crate) fn resume(lua: &Lua, suspended: Suspended, output: JobOutput) -> mlua::Result<Run> {
    let st = state(lua)?;
    let args = finished(lua, suspended.finish, output)?;
    let thread = suspended.thread;
    let outer = st.running.replace(thread.address());
    let result = Running::with(&thread, || thread.thread().resume::<(Value, Value)>(args));
    st.running.set(outer);
    let (a, b) = result?;
    if thread.thread().status() != ThreadStatus::Resumable {
        st.spare.set(Some(thread));
        let req = match b {
            Value::Table(t) => Some(t),
            _ => None,
        };
        return Ok(Run::Done(a, req));
    }
    let (job, finish) = job_of(&st, a, b)?;
    Ok(Run::Wait(job, Suspended { thread, finish }))
}

/// The job a slow function yielded: `marker, pending`.
fn job_of(st: &Suspend, a: Value, b: Value) -> mlua::Result<(Job, Finish)> {
    match (a, b) {
        (Value::Table(t), Value::UserData(pending)) if t == st.marker => pending
            .borrow_mut::<Pending>()?
            .0
            .take()
            .ok_or_else(|| mlua::Error::runtime("a slow function's job ran twice")),
        _ => Err(mlua::Error::runtime(
            "attempt to yield from outside a coroutine (a handler cannot yield)",
        )),
    }
}
