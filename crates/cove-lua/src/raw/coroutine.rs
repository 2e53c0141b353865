//! Running a handler call as a coroutine: the arguments are pushed straight
//! onto the coroutine's stack instead of through mlua's registry handles.
//!
//! A request whose only call is its route handler (no middleware, so
//! nothing reuses its `req`) takes a shorter path still: the dispatcher and
//! the handler come from raw registry references, the arguments are pushed
//! with the heap cap lifted, and `lua_resume` (itself a protected call)
//! runs without mlua's protected call around it. That saves ~1k
//! instructions per request (docs/architecture.md).
#![allow(unsafe_code)]

use std::ffi::c_int;

use mlua::{ffi, Lua, Table, Value};

use super::view::{view, View};
use crate::vm::unlimited;

/// A value the registry keeps by a raw reference (`luaL_ref`): pushing it
/// needs no mlua handle and cannot raise. Never released: it lives as long
/// as its VM (the handlers and the dispatcher).
#[derive(Clone, Copy)]
pub(crate) struct RawRef(c_int);

impl RawRef {
    pub(crate) fn new(lua: &Lua, f: &(impl mlua::IntoLua + Clone)) -> mlua::Result<RawRef> {
        let mut r = ffi::LUA_NOREF;
        // SAFETY: `luaL_ref` pops the value `exec_raw` pushed; it may raise
        // a memory error, inside `exec_raw`'s protected call.
        unsafe {
            lua.exec_raw::<()>(f.clone(), |state| {
                r = ffi::luaL_ref(state, ffi::LUA_REGISTRYINDEX);
            })?;
        }
        Ok(RawRef(r))
    }
}

/// One handler or middleware call, as the dispatcher takes it.
pub(crate) struct Call<'a> {
    pub(crate) dispatch: &'a mlua::Function,
    pub(crate) handler: &'a mlua::Function,
    /// The same two by raw reference, for the short path.
    pub(crate) refs: (RawRef, RawRef),
    /// More calls of the request follow: hand `req` back.
    pub(crate) keep: bool,
    /// The request's table, made by an earlier call.
    pub(crate) req: Option<&'a Table>,
    /// What a first call builds `req` from.
    pub(crate) new: Option<NewReq<'a>>,
}

/// What a request's first call builds its `req` table from.
pub(crate) struct NewReq<'a> {
    /// Set `method` and `path` at once: the request runs middleware, whose
    /// reads (a logger's, a router's) would each build them again.
    pub(crate) with_method_path: bool,
    pub(crate) body: Option<&'a [u8]>,
    pub(crate) params: &'a [(std::sync::Arc<str>, String)],
    /// The prelude's metatable for req tables.
    pub(crate) meta: RawRef,
    /// The prelude's current-request slot and `res` (for `dispatch_only`).
    pub(crate) current: RawRef,
    pub(crate) res: RawRef,
}

/// A coroutine for [`dispatch_in`]: its [`mlua::Thread`], which keeps it
/// alive, and its Lua thread.
pub(crate) struct Coroutine {
    handle: mlua::Thread,
    /// Known to be idle with an empty stack: set when made and when
    /// [`dispatch_in`] finished it, cleared when it yields and whenever its
    /// handle is lent out (which can run it). When clear, [`dispatch_in`]
    /// asks the thread.
    idle: std::cell::Cell<bool>,
    thread: *mut ffi::lua_State,
    /// The VM's main thread (see [`dispatch_in`]).
    main: *mut ffi::lua_State,
}

impl Coroutine {
    /// The address `Lua::current_thread().to_pointer()` gives inside it.
    pub(crate) fn address(&self) -> *const std::ffi::c_void {
        self.thread.cast_const().cast()
    }

    /// The coroutine's Lua thread, while `self` keeps it alive.
    pub(super) fn state(&self) -> *mut ffi::lua_State {
        self.thread
    }

    /// Its mlua handle.
    pub(crate) fn thread(&self) -> &mlua::Thread {
        self.idle.set(false);
        &self.handle
    }

    /// Whether it is idle with an empty stack, as [`dispatch_in`] needs it.
    fn is_idle(&self) -> bool {
        self.idle.get()
            // SAFETY: reading the status and top of the thread `self`
            // keeps alive.
            || unsafe {
                ffi::lua_status(self.thread) == ffi::LUA_OK && ffi::lua_gettop(self.thread) == 0
            }
    }
}

/// A new coroutine with an empty stack, ready for [`dispatch_in`].
pub(crate) fn coroutine(lua: &Lua, dispatch: &mlua::Function) -> mlua::Result<Coroutine> {
    let thread = lua.create_thread(dispatch.clone())?;
    let mut co = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: `lua_tothread`, `lua_rawgeti` of the registry's main thread
    // (room for it was checked by `exec_raw`) and `lua_settop` on the new,
    // idle thread (dropping the function `create_thread` left on it) do
    // not raise.
    unsafe {
        lua.exec_raw::<()>(&thread, |state| {
            co.0 = ffi::lua_tothread(state, -1);
            ffi::lua_settop(co.0, 0);
            ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_MAINTHREAD);
            co.1 = ffi::lua_tothread(state, -1);
            ffi::lua_pop(state, 2);
        })?;
    }
    Ok(Coroutine {
        handle: thread,
        idle: std::cell::Cell::new(true),
        thread: co.0,
        main: co.1,
    })
}

/// How [`dispatch_in`] left the coroutine.
pub(crate) enum Resumed {
    /// The dispatcher returned `flow, req`; the coroutine can be reused.
    Done(Value, Option<Table>),
    /// It yielded; [`take_yielded`] gives the values.
    Yielded,
}

/// The first two values a coroutine that [`dispatch_in`] left suspended
/// yielded (a slow function yields `marker, job`); its stack is emptied,
/// as `Thread::resume` expects.
pub(crate) fn take_yielded(lua: &Lua, co: &Coroutine) -> mlua::Result<(Value, Value)> {
    // SAFETY: popping and moving at most two values onto a stack that was
    // grown for them does not raise.
    unsafe {
        lua.exec_raw::<(Value, Value)>((), |state| {
            let n = ffi::lua_gettop(co.thread);
            if n > 2 {
                ffi::lua_pop(co.thread, n - 2);
            }
            ffi::lua_xmove(co.thread, state, n.min(2));
        })
    }
}

/// Run the prelude's dispatcher as the coroutine `co`:
/// `dispatch(handler, req, keep)`, with a new req table on a request's
/// first call.
/// `co` must be new or finished with an empty stack (as [`coroutine`]
/// makes it and this function leaves it), so it is reused without
/// `Thread::reset`. The strings and the params table are pushed straight
/// onto the coroutine's stack instead of through registry handles; an error in the coroutine (which
/// then cannot be reused) is raised again here.
pub(crate) fn dispatch_in(lua: &Lua, co: &Coroutine, call: Call<'_>) -> mlua::Result<Resumed> {
    let Call {
        dispatch,
        handler,
        refs,
        keep,
        req,
        new,
    } = call;
    if !co.is_idle() {
        return Err(mlua::Error::runtime(
            "internal error: the coroutine is not idle",
        ));
    }
    co.idle.set(false);
    if let (false, None, Some(new)) = (keep, req, &new) {
        return dispatch_only(lua, co, refs, new);
    }
    let mut status = ffi::LUA_OK;
    // SAFETY: anything below that raises (a memory error while pushing)
    // unwinds to `exec_raw`'s protected call; the closure holds only borrows. `lua_resume` runs
    // the coroutine in its own protected call and reports its errors as a
    // status; the error value is moved over and raised on this stack. Both
    // stacks have room for what is moved onto them.
    let (flow, req) = unsafe {
        lua.exec_raw::<(Value, Option<Table>)>((dispatch, handler, req), |state| {
            let thread = co.thread;
            // An idle coroutine's stack is empty and has room for at least
            // 2 * LUA_MINSTACK slots (the GC never shrinks it below that).
            // A memory error while pushing onto it is raised again on the
            // main thread; when that is `state` it lands in `exec_raw`'s
            // protected call, so the rest is pushed onto the coroutine
            // directly. Otherwise (a nested call) it is pushed here and moved.
            let direct = state == co.main;
            if direct {
                ffi::lua_xmove(state, thread, 3);
            }
            let to = if direct { thread } else { state };
            ffi::lua_checkstack(to, 6);
            ffi::lua_pushboolean(to, keep as c_int);
            let nargs = 3;
            if let Some(new) = &new {
                // In the place of the nil `req`.
                push_req(to, new);
                ffi::lua_replace(to, -3);
            }
            if !direct {
                ffi::lua_xmove(state, thread, nargs + 1);
            }
            let mut nres: c_int = 0;
            status = ffi::lua_resume(thread, state, nargs, &mut nres);
            match status {
                ffi::LUA_OK => {
                    // The results are all that is left on its stack; the
                    // slots moved off this one make room for two.
                    if nres > 2 {
                        ffi::lua_pop(thread, nres - 2);
                    }
                    ffi::lua_xmove(thread, state, nres.min(2));
                }
                ffi::LUA_YIELD => {}
                ffi::LUA_ERRMEM => ffi::lua_settop(thread, 0),
                _ => {
                    ffi::lua_checkstack(state, 1);
                    ffi::lua_xmove(thread, state, 1);
                    ffi::lua_error(state);
                }
            }
        })
    }?;
    match status {
        ffi::LUA_OK => {
            // Its results were all moved off: the stack is empty.
            co.idle.set(true);
            Ok(Resumed::Done(flow, req))
        }
        ffi::LUA_YIELD => Ok(Resumed::Yielded),
        _ => Err(mlua::Error::MemoryError("not enough memory".into())),
    }
}

/// Push a new req table: `body` and `params` when there are any, `method`
/// and `path` when more calls follow, with the prelude's metatable (the
/// other fields are built on read). Made here rather than by a table
/// constructor in the prelude: nil fields cost nothing and `setmetatable`
/// is not a Lua call. Raises only on a memory error; the caller has made
/// room for 6 values.
unsafe fn push_req(to: *mut ffi::lua_State, new: &NewReq<'_>) {
    let fields = 2 * new.with_method_path as c_int
        + new.body.is_some() as c_int
        + !new.params.is_empty() as c_int;
    ffi::lua_createtable(to, 0, fields);
    if new.with_method_path {
        // The request's own strings are read while it is borrowed: the
        // pushes run with the heap cap lifted, so that they cannot raise
        // (and skip the borrow's release).
        let lua = Lua::get_or_init_from_ptr(to);
        let limit = lua.set_memory_limit(0);
        crate::req::with_method_path(|method, path| {
            // SAFETY: the cap is lifted; the table is on top of `to`.
            unsafe {
                ffi::lua_pushlstring(to, method.as_ptr().cast(), method.len());
                ffi::lua_setfield(to, -2, c"method".as_ptr());
                ffi::lua_pushlstring(to, path.as_ptr().cast(), path.len());
                ffi::lua_setfield(to, -2, c"path".as_ptr());
            }
        });
        if let Ok(limit) = limit {
            let _ = lua.set_memory_limit(limit);
        }
    }
    if let Some(b) = new.body {
        ffi::lua_pushlstring(to, b.as_ptr().cast(), b.len());
        ffi::lua_setfield(to, -2, c"body".as_ptr());
    }
    if !new.params.is_empty() {
        ffi::lua_createtable(to, 0, new.params.len() as c_int);
        for (k, v) in new.params {
            ffi::lua_pushlstring(to, k.as_ptr().cast(), k.len());
            ffi::lua_pushlstring(to, v.as_ptr().cast(), v.len());
            ffi::lua_rawset(to, -3);
        }
        ffi::lua_setfield(to, -2, c"params".as_ptr());
    }
    if ffi::lua_rawgeti(to, ffi::LUA_REGISTRYINDEX, new.meta.0.into()) == ffi::LUA_TTABLE {
        ffi::lua_setmetatable(to, -2);
    } else {
        ffi::lua_settop(to, -2);
    }
}

/// The short path of [`dispatch_in`]: a request's only call, with a new
/// req table. It does what `dispatch(handler, req, false)` would, without
/// that Lua call (~200 instructions): sets `current[1] = req` and runs
/// `handler(req, res)` as the coroutine. Its results are the handler's
/// (all of them; a second one is no req table, but nothing reads the req
/// after a request's last call).
fn dispatch_only(
    lua: &Lua,
    co: &Coroutine,
    (_, handler): (RawRef, RawRef),
    new: &NewReq<'_>,
) -> mlua::Result<Resumed> {
    let thread = co.thread;
    // SAFETY: the coroutine is idle with an empty stack (see `dispatch_in`)
    // and `lua_checkstack` reports failure instead of raising. Reading the
    // registry allocates nothing; the pushes that allocate run with the
    // heap cap lifted, where only a real out-of-memory could raise.
    unlimited(lua, || unsafe {
        if ffi::lua_checkstack(thread, 10) == 0 {
            return Err(mlua::Error::MemoryError("not enough memory".into()));
        }
        ffi::lua_rawgeti(thread, ffi::LUA_REGISTRYINDEX, handler.0.into());
        push_req(thread, new);
        if ffi::lua_rawgeti(thread, ffi::LUA_REGISTRYINDEX, new.current.0.into()) == ffi::LUA_TTABLE
        {
            ffi::lua_pushvalue(thread, -2);
            ffi::lua_rawseti(thread, -2, 1);
        }
        ffi::lua_settop(thread, -2);
        ffi::lua_rawgeti(thread, ffi::LUA_REGISTRYINDEX, new.res.0.into());
        Ok(())
    })
    // SAFETY: emptying the idle coroutine's stack raises nothing.
    .inspect_err(|_| unsafe { ffi::lua_settop(thread, 0) })?;
    let mut nres: c_int = 0;
    // SAFETY: `lua_resume` runs the coroutine in its own protected call;
    // errors come back as a status. Only `flow` is read from the results.
    let status = unsafe { ffi::lua_resume(thread, co.main, 2, &mut nres) };
    match status {
        ffi::LUA_OK => {
            // SAFETY: the results are all that is on the coroutine's stack.
            let flow = unsafe { flow_value(thread, nres) };
            // SAFETY: emptying the finished coroutine's stack raises nothing.
            unsafe { ffi::lua_settop(thread, 0) };
            co.idle.set(true);
            Ok(Resumed::Done(flow, None))
        }
        ffi::LUA_YIELD => Ok(Resumed::Yielded),
        ffi::LUA_ERRMEM => {
            // SAFETY: as above.
            unsafe { ffi::lua_settop(thread, 0) };
            Err(mlua::Error::MemoryError("not enough memory".into()))
        }
        // SAFETY: the error value is moved onto the stack `exec_raw` made
        // room on and raised there, inside its protected call, so mlua
        // turns it into an error as it does for any other call.
        _ => unsafe {
            lua.exec_raw::<()>((), |state| {
                ffi::lua_xmove(thread, state, 1);
                ffi::lua_error(state);
            })
        }
        .map(|()| Resumed::Done(Value::Nil, None)),
    }
}

/// The first of the `n` results on top of `thread`'s stack as far as the
/// flow reads it: a boolean or a number (anything else continues).
unsafe fn flow_value(thread: *mut ffi::lua_State, n: c_int) -> Value {
    if n == 0 {
        return Value::Nil;
    }
    let idx = -n;
    match view(thread, idx) {
        View::Bool(b) => Value::Boolean(b),
        View::Int(n) => Value::Integer(n),
        View::Float(f) => Value::Number(f),
        _ => Value::Nil,
    }
}
