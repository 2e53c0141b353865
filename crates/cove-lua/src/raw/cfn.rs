//! Lua C functions written safely: a type implementing [`CFn`] is called
//! through [`trampoline`], which hands it the frame as a [`Stack`] and
//! raises its failure as a message at the caller's line (`app.lua:12: …`,
//! as `error(msg, 2)` from a Lua wrapper would) once every Rust value is
//! dropped: a Lua error `longjmp`s, so it must skip no destructor. A panic
//! becomes an internal error the same way.
#![allow(unsafe_code)]

use std::any::TypeId;
use std::cell::RefCell;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use mlua::{ffi, FromLuaMulti, IntoLuaMulti, Lua};

use super::stack::{misuse, Lifted, Stack};

/// A Lua C function: reads its arguments from `s`, pushes its results
/// and says how many (the top ones), or fails with a message.
pub(crate) trait CFn {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String>;
}

/// The C function Lua calls for `F`.
pub(super) unsafe extern "C-unwind" fn trampoline<F: CFn>(state: *mut ffi::lua_State) -> c_int {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: Lua just called this C function on `state`; the handle
        // is dropped before it returns.
        let mut s = unsafe { Stack::entry(state) };
        let n = F::call(&mut s)?;
        if n < 0 || n > s.top() {
            return Err(format!("internal error: {n} results of {}", s.top()));
        }
        Ok(n)
    }));
    let msg = match outcome {
        Ok(Ok(n)) => return n,
        Ok(Err(msg)) => msg,
        Err(_) => "internal error in a Cove function".to_string(),
    };
    // SAFETY: nothing Rust owns is live past `raise`'s copy of the message.
    unsafe { raise(state, msg) }
}

/// Raise `msg` at the caller's line.
///
/// # Safety
/// `state` runs a C function; no Rust value that needs dropping is live in
/// the frames the error unwinds (the caller's own: `msg` is dropped here).
pub(super) unsafe fn raise(state: *mut ffi::lua_State, msg: String) -> c_int {
    let mut buf = [0u8; 1024];
    let n = msg.len().min(buf.len());
    buf[..n].copy_from_slice(&msg.as_bytes()[..n]);
    drop(msg);
    if ffi::lua_checkstack(state, 2) == 0 {
        // The frame's first LUA_MINSTACK slots are always there.
        ffi::lua_settop(state, 0);
    }
    ffi::luaL_where(state, 1);
    ffi::lua_pushlstring(state, buf.as_ptr().cast(), n);
    ffi::lua_concat(state, 2);
    ffi::lua_error(state)
}

/// A C function whose one result is a short string, pushed by
/// [`text_trampoline`] once every Rust value is dropped: under the heap cap
/// (the push may raise a memory error then, unwinding no Rust value).
pub(crate) trait CText {
    fn call(s: &mut Stack<'_>) -> Result<ShortText, String>;
}

/// Up to 64 bytes of text, kept inline (no destructor).
pub(crate) struct ShortText {
    buf: [u8; 64],
    len: usize,
}

impl ShortText {
    /// The first 64 bytes of `text`.
    pub(crate) fn new(text: &[u8]) -> ShortText {
        let mut buf = [0u8; 64];
        let len = text.len().min(buf.len());
        buf[..len].copy_from_slice(&text[..len]);
        ShortText { buf, len }
    }
}

/// The C function Lua calls for `F`.
unsafe extern "C-unwind" fn text_trampoline<F: CText>(state: *mut ffi::lua_State) -> c_int {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as in `trampoline`.
        let mut s = unsafe { Stack::entry(state) };
        let text = F::call(&mut s)?;
        Ok((text, s.reserve(1)))
    }));
    let msg = match outcome {
        Ok(Ok((text, room))) => {
            // SAFETY: nothing Rust owns is live but `text`, plain bytes; a
            // memory error raised by the push unwinds no destructor.
            unsafe {
                if !room {
                    return raise(state, "stack overflow".into());
                }
                ffi::lua_pushlstring(state, text.buf.as_ptr().cast(), text.len);
            }
            return 1;
        }
        Ok(Err(msg)) => msg,
        Err(_) => "internal error in a Cove function".to_string(),
    };
    // SAFETY: as in `trampoline`.
    unsafe { raise(state, msg) }
}

/// `F` as a Lua function.
pub(crate) fn function<F: CFn>(lua: &Lua) -> mlua::Result<mlua::Function> {
    // SAFETY: the trampoline follows the C function protocol: it raises
    // only once no Rust value is live.
    unsafe { lua.create_c_function(trampoline::<F>) }
}

impl Lifted<'_, '_> {
    /// Replace the `n` values on top with a closure of `F` over them (its
    /// upvalues 1..=n, read with [`upvalue`]).
    pub(crate) fn push_closure<F: CFn>(&mut self, n: c_int) {
        if !(0..=255).contains(&n) {
            misuse("upvalues");
        }
        self.pops(n);
        self.one_more();
        // SAFETY: the upvalues are on top, above the arguments; lifted, so
        // making the closure cannot raise.
        unsafe { ffi::lua_pushcclosure(self.state, trampoline::<F>, n) };
    }

    /// [`Lifted::push_closure`] for a [`CText`].
    pub(crate) fn push_text_closure<F: CText>(&mut self, n: c_int) {
        if !(0..=255).contains(&n) {
            misuse("upvalues");
        }
        self.pops(n);
        self.one_more();
        // SAFETY: as in `push_closure`.
        unsafe { ffi::lua_pushcclosure(self.state, text_trampoline::<F>, n) };
    }
}

/// A C function closing over Rust data (its upvalue 1, a userdata owning
/// it: [`Lifted::push_closure_with`]); its own upvalues follow, from 2.
/// Its results are a flag and bytes ([`FlagAndBytes`]).
pub(crate) trait CFnWith: 'static {
    type Data: 'static;
    fn call<'d>(s: &mut Stack<'_>, data: &'d Self::Data) -> Result<FlagAndBytes<'d>, String>;
}

/// A [`CFnWith`]'s two results, pushed once every Rust value is dropped
/// (under the heap cap: a memory error then unwinds nothing): the flag,
/// and the bytes (or, were they borrowed mutably, a note that they are
/// busy), which belong to the function's data.
pub(crate) struct FlagAndBytes<'d>(pub(crate) bool, pub(crate) &'d RefCell<Vec<u8>>);

/// The block of a data userdata: its type, checked on every read.
#[repr(C)]
struct Boxed<T> {
    tag: TypeId,
    data: T,
}

/// The tag of a block whose data was dropped.
struct Dropped;

/// `__gc` of a data userdata.
unsafe extern "C-unwind" fn drop_data<T: 'static>(state: *mut ffi::lua_State) -> c_int {
    let p = ffi::lua_touserdata(state, 1).cast::<Boxed<T>>();
    if !p.is_null() && (*p).tag == TypeId::of::<T>() {
        (*p).tag = TypeId::of::<Dropped>();
        // A panic must not unwind into Lua's collector.
        let _ = catch_unwind(AssertUnwindSafe(|| std::ptr::drop_in_place(&mut (*p).data)));
    }
    0
}

/// The C function Lua calls for `F`.
unsafe extern "C-unwind" fn trampoline_with<F: CFnWith>(state: *mut ffi::lua_State) -> c_int {
    let p = ffi::lua_touserdata(state, upvalue(1)).cast::<Boxed<F::Data>>();
    if p.is_null() || (*p).tag != TypeId::of::<F::Data>() {
        return raise(
            state,
            "internal error: a Cove function lost its data".into(),
        );
    }
    // SAFETY: the block is the running closure's upvalue: alive (and not
    // finalized) until the call returns; its tag says it holds the data.
    let data: &F::Data = &(*p).data;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as in `trampoline`.
        let mut s = unsafe { Stack::entry(state) };
        let out = F::call(&mut s, data)?;
        Ok((out, s.reserve(2)))
    }));
    let msg = match outcome {
        Ok(Ok((FlagAndBytes(flag, bytes), room))) => {
            const BUSY: &[u8] = b"internal error: the result is busy";
            let (ptr, len) = match bytes.try_borrow() {
                Ok(b) => (b.as_ptr(), b.len()),
                Err(_) => (BUSY.as_ptr(), BUSY.len()),
            };
            // SAFETY: the bytes belong to the data, alive for the call, and
            // nothing runs before `lua_pushlstring` copies them (a
            // collection step, which may run finalizers, comes after the
            // copy; an emergency collection runs none). No Rust value
            // needing a drop is live if the push raises.
            unsafe {
                if !room {
                    return raise(state, "stack overflow".into());
                }
                ffi::lua_pushboolean(state, c_int::from(flag));
                ffi::lua_pushlstring(state, ptr.cast(), len);
            }
            return 2;
        }
        Ok(Err(msg)) => msg,
        Err(_) => "internal error in a Cove function".to_string(),
    };
    // SAFETY: as in `trampoline`.
    unsafe { raise(state, msg) }
}

impl Lifted<'_, '_> {
    /// Replace the `n` values on top with a closure of `F` owning `data`
    /// (its upvalue 1) over them (upvalues 2..=n + 1).
    pub(crate) fn push_closure_with<F: CFnWith>(&mut self, data: F::Data, n: c_int) {
        if !(0..255).contains(&n) || !self.reserve(3) {
            misuse("upvalues");
        }
        // Lua aligns a userdata block for any of its own types (8 bytes).
        if std::mem::align_of::<Boxed<F::Data>>() > 8 {
            misuse("data aligned past 8 bytes");
        }
        self.pops(n);
        // SAFETY: lifted, nothing here raises; the block is written before
        // anything can read it, and gets its finalizer before it is set as
        // the metatable (Lua marks it for finalization then).
        unsafe {
            let state = self.state;
            let p = ffi::lua_newuserdatauv(state, std::mem::size_of::<Boxed<F::Data>>(), 0)
                .cast::<Boxed<F::Data>>();
            p.write(Boxed {
                tag: TypeId::of::<F::Data>(),
                data,
            });
            ffi::lua_createtable(state, 0, 1);
            ffi::lua_pushcfunction(state, drop_data::<F::Data>);
            ffi::lua_setfield(state, -2, c"__gc".as_ptr());
            ffi::lua_setmetatable(state, -2);
            ffi::lua_rotate(state, -(n + 1), 1);
            ffi::lua_pushcclosure(state, trampoline_with::<F>, n + 1);
        }
        self.top += 1;
    }
}

/// The pseudo-index of the running closure's upvalue `n` (1..=255); a
/// missing one reads as nil.
#[inline(always)]
pub(crate) const fn upvalue(n: c_int) -> c_int {
    ffi::LUA_REGISTRYINDEX - n
}

/// Run `f` on a frame holding `args` (mlua's `exec_raw`) with the heap cap
/// lifted; what it leaves on the frame is converted to `T`.
pub(crate) fn exec<T: FromLuaMulti>(
    lua: &Lua,
    args: impl IntoLuaMulti,
    f: impl FnOnce(&mut Lifted<'_, '_>),
) -> mlua::Result<T> {
    let mut failed = None;
    // SAFETY: the closure runs as a C function just called by mlua's
    // protected call; nothing in it raises (the cap is lifted) and panics
    // are caught before they reach Lua.
    let result = unsafe {
        lua.exec_raw::<T>(args, |state| {
            let mut s = Stack::entry(state);
            match catch_unwind(AssertUnwindSafe(|| s.lifted(f))) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => failed = Some(mlua::Error::MemoryError(e)),
                Err(_) => failed = Some(mlua::Error::runtime("internal error in Cove")),
            }
        })
    };
    match failed {
        Some(e) => Err(e),
        None => result,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pops its own argument: a misuse the handle refuses.
    struct PopsArgument;
    impl CFn for PopsArgument {
        fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
            s.set_top(0);
            Ok(0)
        }
    }

    /// Reads past the frame.
    struct ReadsOutside;
    impl CFn for ReadsOutside {
        fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
            Ok(s.ty(-100))
        }
    }

    struct Fails;
    impl CFn for Fails {
        fn call(_: &mut Stack<'_>) -> Result<c_int, String> {
            Err("x.y: bad input".into())
        }
    }

    /// Returns its string argument and a new table holding it.
    struct Wraps;
    impl CFn for Wraps {
        fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
            let arg = s.arg_str(1).ok_or("x.y: a string please")?;
            s.lifted(|s| {
                s.push_bytes(arg);
                s.new_table(0, 1);
                s.set_bytes(-1, b"v", arg);
            })?;
            Ok(2)
        }
    }

    #[test]
    fn failures_and_misuse_raise_at_the_callers_line() {
        let lua = Lua::new();
        let g = lua.globals();
        g.set("pops", function::<PopsArgument>(&lua).unwrap())
            .unwrap();
        g.set("outside", function::<ReadsOutside>(&lua).unwrap())
            .unwrap();
        g.set("fails", function::<Fails>(&lua).unwrap()).unwrap();
        g.set("wraps", function::<Wraps>(&lua).unwrap()).unwrap();
        let (a, b, c, d, e): (String, String, String, String, String) = lua
            .load(
                "local _, a = pcall(pops, 1)\n\
                 local _, b = pcall(outside)\n\
                 local _, c = pcall(function() fails() end)\n\
                 local s, t = wraps('hi')\n\
                 local _, e = pcall(function() wraps({}) end)\n\
                 return a, b, c, s .. t.v, e",
            )
            .set_name("@t.lua")
            .eval()
            .unwrap();
        assert!(a.contains("internal error"), "{a}");
        assert!(b.contains("internal error"), "{b}");
        assert_eq!(c, "t.lua:3: x.y: bad input");
        assert_eq!(d, "hihi");
        assert_eq!(e, "t.lua:5: x.y: a string please");
    }
}
