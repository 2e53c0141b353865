//! The hot paths that work on the Lua stack directly: encoding a Lua value
//! as JSON and starting a handler's coroutine (`db.query` rows: rows.rs).
//!
//! Through mlua's safe API every table entry read or written creates and
//! drops a registry reference, and with a heap cap set each write runs in
//! its own protected call: ~1.5k instructions per entry. Here the same work
//! costs ~100. Each `unsafe` block states why it cannot raise a Lua error
//! across Rust frames.
#![allow(unsafe_code)]

use std::ffi::c_int;

use mlua::{ffi, Lua, Table, Value};

use cove_caps::json::{write_float, write_int, write_string, JsonError};

/// Deepest table nesting `json.encode` accepts.
const MAX_DEPTH: usize = 128;

/// Encode `value` as JSON with Hull's Lua rules (see json.rs).
pub(crate) fn encode(lua: &Lua, value: &Value) -> Result<Vec<u8>, JsonError> {
    let mut result = Err(JsonError::TooDeep);
    // SAFETY: the walker only reads. `lua_next` on keys taken from the same
    // table, `lua_rawlen`, `lua_rawgeti` and `lua_tolstring` on values that
    // are already strings neither allocate nor raise, and the stack is
    // grown with `lua_checkstack` (which reports failure, never raises)
    // before each push. So no Lua error can unwind through these frames.
    let called = unsafe {
        lua.exec_raw::<()>(value, |state| {
            result = encode_at(state, ffi::lua_gettop(state));
        })
    };
    called.map_err(|_| JsonError::TooDeep)?;
    result
}

/// Encode the value at stack index `idx` (absolute). Same safety argument
/// as [`encode`]: the walk only reads and never raises.
pub(crate) unsafe fn encode_at(
    state: *mut ffi::lua_State,
    idx: c_int,
) -> Result<Vec<u8>, JsonError> {
    // The staging vectors keep their capacity from one call to the next.
    let mut enc = SCRATCH.with(|s| s.take()).unwrap_or_default();
    enc.buf = Vec::with_capacity(256);
    let result = enc.walk(state, idx, 0);
    let out = std::mem::take(&mut enc.buf);
    enc.members.clear();
    SCRATCH.with(|s| s.set(Some(enc)));
    result.map(|()| out)
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Encoder>> = const { std::cell::Cell::new(None) };
}

/// The bytes of the string at `idx`; callers check the type first (on a
/// number `lua_tolstring` would convert in place, which allocates).
pub(crate) unsafe fn stack_bytes<'a>(state: *mut ffi::lua_State, idx: c_int) -> &'a [u8] {
    let mut len = 0usize;
    let ptr = ffi::lua_tolstring(state, idx, &mut len);
    if ptr.is_null() {
        return &[];
    }
    std::slice::from_raw_parts(ptr as *const u8, len)
}

/// One output buffer for the whole value. An object's keys and values stay
/// on the Lua stack while its keys are sorted, so nothing is staged or copied.
#[derive(Default)]
struct Encoder {
    buf: Vec<u8>,
    /// Stack slots of the keys of the objects being encoded, innermost last.
    members: Vec<Member>,
}

/// A key on the Lua stack (its value sits in the slot above it).
#[derive(Clone, Copy)]
struct Member {
    slot: c_int,
    key: *const u8,
    len: usize,
}

impl Member {
    /// The key's bytes; the string is anchored by its stack slot.
    unsafe fn bytes<'a>(self) -> &'a [u8] {
        std::slice::from_raw_parts(self.key, self.len)
    }
}

impl Encoder {
    unsafe fn walk(
        &mut self,
        state: *mut ffi::lua_State,
        idx: c_int,
        depth: usize,
    ) -> Result<(), JsonError> {
        let out = &mut self.buf;
        match ffi::lua_type(state, idx) {
            ffi::LUA_TNIL => out.extend_from_slice(b"null"),
            ffi::LUA_TBOOLEAN => {
                let b = ffi::lua_toboolean(state, idx) != 0;
                out.extend_from_slice(if b { b"true" } else { b"false" });
            }
            ffi::LUA_TNUMBER => {
                if ffi::lua_isinteger(state, idx) != 0 {
                    write_int(out, ffi::lua_tointegerx(state, idx, std::ptr::null_mut()));
                } else {
                    write_float(out, ffi::lua_tonumberx(state, idx, std::ptr::null_mut()))?;
                }
            }
            ffi::LUA_TSTRING => write_string(out, stack_bytes(state, idx)),
            ffi::LUA_TTABLE => self.table(state, idx, depth + 1)?,
            ffi::LUA_TFUNCTION => return Err(JsonError::Unsupported("function")),
            ffi::LUA_TTHREAD => return Err(JsonError::Unsupported("coroutine")),
            _ => return Err(JsonError::Unsupported("userdata")),
        }
        Ok(())
    }

    unsafe fn table(
        &mut self,
        state: *mut ffi::lua_State,
        idx: c_int,
        depth: usize,
    ) -> Result<(), JsonError> {
        if depth > MAX_DEPTH || ffi::lua_checkstack(state, 8) == 0 {
            return Err(JsonError::TooDeep);
        }
        if let Some(block) = crate::rows::packed_at(state, idx) {
            return crate::rows::write_json(block, &mut self.buf);
        }
        let len = ffi::lua_rawlen(state, idx);
        if len > 0 {
            return self.array(state, idx, len, depth);
        }
        let base = ffi::lua_gettop(state);
        let first = self.members.len();
        let result = self.object(state, idx, depth, first);
        self.members.truncate(first);
        ffi::lua_settop(state, base);
        result
    }

    /// Leave every (key, value) pair of the table on the stack, then write
    /// them in key order.
    unsafe fn object(
        &mut self,
        state: *mut ffi::lua_State,
        idx: c_int,
        depth: usize,
        first: usize,
    ) -> Result<(), JsonError> {
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, idx) != 0 {
            let slot = ffi::lua_gettop(state) - 1;
            if ffi::lua_type(state, slot) != ffi::LUA_TSTRING {
                return Err(JsonError::MixedKeys);
            }
            let key = stack_bytes(state, slot);
            self.members.push(Member {
                slot,
                key: key.as_ptr(),
                len: key.len(),
            });
            // The next `lua_next` consumes a copy of the key.
            if ffi::lua_checkstack(state, 3) == 0 {
                return Err(JsonError::TooDeep);
            }
            ffi::lua_pushvalue(state, slot);
        }
        let members = &mut self.members[first..];
        if members.is_empty() {
            self.buf.extend_from_slice(b"[]");
            return Ok(());
        }
        members.sort_unstable_by(|a, b| a.bytes().cmp(b.bytes()));
        self.buf.push(b'{');
        for i in first..self.members.len() {
            if i > first {
                self.buf.push(b',');
            }
            let m = self.members[i];
            write_string(&mut self.buf, m.bytes());
            self.buf.push(b':');
            self.walk(state, m.slot + 1, depth)?;
        }
        self.buf.push(b'}');
        Ok(())
    }

    unsafe fn array(
        &mut self,
        state: *mut ffi::lua_State,
        idx: c_int,
        len: usize,
        depth: usize,
    ) -> Result<(), JsonError> {
        // Every key must be an integer in 1..=len: count them.
        let mut count = 0usize;
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, idx) != 0 {
            count += 1;
            let index_key = ffi::lua_type(state, -2) == ffi::LUA_TNUMBER
                && ffi::lua_isinteger(state, -2) != 0
                && ffi::lua_tointegerx(state, -2, std::ptr::null_mut()) >= 1;
            if !index_key {
                return Err(JsonError::MixedKeys);
            }
            ffi::lua_settop(state, -2);
        }
        if count != len {
            return Err(JsonError::SparseArray);
        }
        self.buf.push(b'[');
        for i in 1..=len {
            if i > 1 {
                self.buf.push(b',');
            }
            ffi::lua_rawgeti(state, idx, i as ffi::lua_Integer);
            self.walk(state, ffi::lua_gettop(state), depth)?;
            ffi::lua_settop(state, -2);
        }
        self.buf.push(b']');
        Ok(())
    }
}

/// The arguments of a request's first call: what the dispatcher builds `req` from.
pub(crate) struct NewReq<'a> {
    pub(crate) method: &'a str,
    pub(crate) path: &'a str,
    pub(crate) body: Option<&'a [u8]>,
    pub(crate) params: &'a [(String, String)],
}

/// A coroutine's thread, for [`dispatch_in`]; valid while its [`mlua::Thread`]
/// (kept beside it) is.
#[derive(Clone, Copy)]
pub(crate) struct Coroutine {
    thread: *mut ffi::lua_State,
    /// The VM's main thread (see [`dispatch_in`]).
    main: *mut ffi::lua_State,
}

impl Coroutine {
    /// The address `Lua::current_thread().to_pointer()` gives inside it.
    pub(crate) fn address(self) -> *const std::ffi::c_void {
        self.thread.cast_const().cast()
    }

    /// The coroutine's Lua thread.
    pub(crate) fn state(self) -> *mut ffi::lua_State {
        self.thread
    }
}

/// A new coroutine with an empty stack, ready for [`dispatch_in`].
pub(crate) fn coroutine(
    lua: &Lua,
    dispatch: &mlua::Function,
) -> mlua::Result<(mlua::Thread, Coroutine)> {
    let thread = lua.create_thread(dispatch.clone())?;
    let mut co = Coroutine {
        thread: std::ptr::null_mut(),
        main: std::ptr::null_mut(),
    };
    // SAFETY: `lua_tothread`, `lua_rawgeti` of the registry's main thread
    // (room for it was checked by `exec_raw`) and `lua_settop` on the new,
    // idle thread (dropping the function `create_thread` left on it) do
    // not raise.
    unsafe {
        lua.exec_raw::<()>(&thread, |state| {
            co.thread = ffi::lua_tothread(state, -1);
            ffi::lua_settop(co.thread, 0);
            ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::LUA_RIDX_MAINTHREAD);
            co.main = ffi::lua_tothread(state, -1);
            ffi::lua_pop(state, 2);
        })?;
    }
    Ok((thread, co))
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
pub(crate) fn take_yielded(lua: &Lua, co: Coroutine) -> mlua::Result<(Value, Value)> {
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
/// `dispatch(handler, req, keep)` for a request that already has its table,
/// `dispatch(handler, nil, keep, method, path, body, params)` for a new one.
/// `co` must be new or finished with an empty stack (as [`coroutine`]
/// makes it and this function leaves it), so it is reused without
/// `Thread::reset`. The strings and the params table are pushed straight
/// onto the coroutine's stack instead of through registry handles; an error in the coroutine (which
/// then cannot be reused) is raised again here.
pub(crate) fn dispatch_in(
    lua: &Lua,
    co: Coroutine,
    dispatch: &mlua::Function,
    keep: bool,
    handler: &mlua::Function,
    req: Option<&Table>,
    new: Option<NewReq<'_>>,
) -> mlua::Result<Resumed> {
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
            let mut nargs = 3;
            if let Some(new) = new {
                ffi::lua_pushlstring(to, new.method.as_ptr().cast(), new.method.len());
                ffi::lua_pushlstring(to, new.path.as_ptr().cast(), new.path.len());
                match new.body {
                    Some(b) => {
                        ffi::lua_pushlstring(to, b.as_ptr().cast(), b.len());
                    }
                    None => ffi::lua_pushnil(to),
                }
                if new.params.is_empty() {
                    ffi::lua_pushnil(to);
                } else {
                    ffi::lua_createtable(to, 0, new.params.len() as c_int);
                    for (k, v) in new.params {
                        ffi::lua_pushlstring(to, k.as_ptr().cast(), k.len());
                        ffi::lua_pushlstring(to, v.as_ptr().cast(), v.len());
                        ffi::lua_rawset(to, -3);
                    }
                }
                nargs = 7;
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
        ffi::LUA_OK => Ok(Resumed::Done(flow, req)),
        ffi::LUA_YIELD => Ok(Resumed::Yielded),
        _ => Err(mlua::Error::MemoryError("not enough memory".into())),
    }
}
