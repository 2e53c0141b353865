//! Suspending a Lua handler while slow work (a PBKDF2 hash) runs off the
//! worker's thread, so the worker keeps serving its other connections.
//!
//! A handler runs as a plain call — no coroutine, nothing extra per request.
//! The first time one calls a slow function it runs inline (stalling the
//! worker, as Hull always does) and the handler is marked; from then on that
//! handler runs as a coroutine, and the slow function yields a job to the
//! engine instead of running. The engine hands the job to the server and
//! resumes the coroutine with its result.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use mlua::prelude::LuaThreadStatus as ThreadStatus;
use mlua::{Function, Lua, MultiValue, Table, Thread, Value};

use cove_caps::crypto::{CryptoResult, FUNCTIONS};
use cove_core::{HandlerId, Job, JobOutput};
use cove_db::Db;

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
}

/// How a call ended: finished with the dispatcher's results, or waiting.
pub(crate) enum Run {
    /// The dispatcher's `flow, req`.
    Done(Value, Option<Table>),
    Wait(Job, Thread),
}

/// The wrapper around a slow function: yield a job when running as a
/// suspendable handler, else mark the handler and run inline.
const WRAPPER: &str = r#"
local raw, can_suspend, mark_slow, yield, marker, name = ...
return function(...)
  if can_suspend() then
    local ok, a, b = yield(marker, name, ...)
    if ok then return a, b end
    error(a, 2)
  end
  mark_slow()
  return raw(...)
end
"#;

/// Create the state; the engine keeps one handle, the Lua callbacks another.
pub(crate) fn install(lua: &Lua) -> mlua::Result<Rc<Suspend>> {
    let st = Rc::new(Suspend {
        running: RefCell::new(None),
        handler: Cell::new(None),
        slow: RefCell::new(Vec::new()),
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

impl Suspend {
    /// Note which handler is being called (`None` after the call).
    pub(crate) fn set_handler(&self, id: Option<HandlerId>) {
        self.handler.set(id);
    }

    pub(crate) fn is_slow(&self, id: HandlerId) -> bool {
        self.slow
            .borrow()
            .get(id as usize)
            .copied()
            .unwrap_or(false)
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

/// Wrap the Lua function `raw` (the slow crypto function `name`).
pub(crate) fn wrap(lua: &Lua, raw: Function, name: &str) -> mlua::Result<Function> {
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
        raw,
        can_suspend,
        mark_slow,
        yield_fn,
        marker,
        name,
    ))
}

/// Start `dispatch(args)` as a coroutine.
pub(crate) fn start(lua: &Lua, dispatch: &Function, args: MultiValue) -> mlua::Result<Run> {
    let thread = lua.create_thread(dispatch.clone())?;
    step(lua, thread, args)
}

/// Resume a suspended handler with its job's output.
pub(crate) fn resume(lua: &Lua, thread: Thread, output: JobOutput) -> mlua::Result<Run> {
    let args = match output.downcast::<CryptoResult>() {
        Ok(result) => match *result {
            Ok(out) => {
                let mut values = crate::crypto::to_lua(lua, out)?;
                values.push_front(Value::Boolean(true));
                values
            }
            Err(e) => MultiValue::from_iter([
                Value::Boolean(false),
                Value::String(lua.create_string(e.to_string())?),
            ]),
        },
        Err(_) => MultiValue::from_iter([
            Value::Boolean(false),
            Value::String(lua.create_string("the background job failed")?),
        ]),
    };
    step(lua, thread, args)
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
    let job = job_of(lua, values)?;
    Ok(Run::Wait(job, thread))
}

/// The job a slow function yielded: `marker, name, args...`.
fn job_of(lua: &Lua, values: MultiValue) -> mlua::Result<Job> {
    let mut it = values.into_iter();
    let marker = state(lua)?.marker.clone();
    match (it.next(), it.next()) {
        (Some(Value::Table(t)), Some(Value::String(name))) if t == marker => {
            let name = name.to_str()?.to_string();
            let f = FUNCTIONS
                .iter()
                .find(|f| f.lua == name)
                .ok_or_else(|| mlua::Error::runtime(format!("no slow function {name}")))?;
            let args = crate::crypto::args_of(f, &it.collect())?;
            Ok(Job::new(move || f.call(&args, f.lua)))
        }
        _ => Err(mlua::Error::runtime(
            "attempt to yield from outside a coroutine (a handler cannot yield)",
        )),
    }
}
