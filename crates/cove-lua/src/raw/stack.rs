//! [`Stack`]: the safe handle on the frame of a Lua C function (or of an
//! `exec_raw` closure), and [`Lifted`], the same with the heap cap lifted,
//! which alone may allocate. See raw/mod.rs for what they guarantee.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use mlua::{ffi, Lua};

use super::view::{self, View};

/// The frame of a running C function: slots `1..=top`, of which
/// `1..=base` (its arguments) are never popped or replaced through this
/// handle, and room (checked free slots) up to `room`. The handle keeps
/// its own count of the top, so checks are compares, not calls.
pub(crate) struct Stack<'l> {
    pub(super) state: *mut ffi::lua_State,
    pub(super) top: c_int,
    pub(super) room: c_int,
    pub(super) base: c_int,
    /// The VM, once looked up (a registry read, ~120 instructions).
    lua: std::cell::Cell<Option<&'l Lua>>,
    /// Invariant in `'l`, so that an [`ArgTable`] of one frame is never
    /// taken for one of another.
    _frame: PhantomData<fn(&'l ()) -> &'l ()>,
}

#[cold]
#[inline(never)]
pub(super) fn misuse(what: &str) -> ! {
    panic!("Lua stack misuse: {what}")
}

impl<'l> Stack<'l> {
    /// The frame of `state` just entered.
    ///
    /// # Safety
    /// `state` is running a C function (or mlua's `exec_raw` closure) that
    /// was just called (so at least `LUA_MINSTACK` slots are free above its
    /// top), nothing else touches its stack for `'l` but through this
    /// handle (or code that leaves it as found), and `'l` ends before the
    /// function returns.
    #[inline(always)]
    pub(super) unsafe fn entry(state: *mut ffi::lua_State) -> Stack<'l> {
        let top = ffi::lua_gettop(state);
        Stack {
            state,
            top,
            room: top + ffi::LUA_MINSTACK,
            base: top,
            lua: std::cell::Cell::new(None),
            _frame: PhantomData,
        }
    }

    /// A handle on a frame that raw code is in the middle of: the slots it
    /// holds are kept as arguments are.
    ///
    /// # Safety
    /// `state` runs a C function (or an `exec_raw` closure) whose stack
    /// nothing else touches while the handle lives, but through it.
    #[inline(always)]
    pub(super) unsafe fn within(state: *mut ffi::lua_State) -> Stack<'l> {
        let top = ffi::lua_gettop(state);
        Stack {
            state,
            top,
            room: top,
            base: top,
            lua: std::cell::Cell::new(None),
            _frame: PhantomData,
        }
    }

    #[inline(always)]
    pub(super) fn state(&self) -> *mut ffi::lua_State {
        self.state
    }

    /// Take the top from the VM again after raw code (in this module)
    /// pushed or popped; it must have kept `1..=base` and stayed in room.
    ///
    /// # Safety
    /// As said: the arguments are where they were.
    #[inline(always)]
    pub(super) unsafe fn resync(&mut self) {
        let top = ffi::lua_gettop(self.state);
        if top < self.base {
            misuse("the arguments were popped");
        }
        self.top = top;
        self.room = self.room.max(top);
    }

    /// The VM, for mlua calls (which leave the stack as they found it).
    #[inline(always)]
    pub(crate) fn lua(&self) -> &'l Lua {
        if let Some(lua) = self.lua.get() {
            return lua;
        }
        // SAFETY: the state is alive while its frame runs; mlua keeps its
        // handle in the state's registry.
        let lua = unsafe { Lua::get_or_init_from_ptr(self.state) };
        self.lua.set(Some(lua));
        lua
    }

    /// The index of the top slot (0 when empty).
    #[inline(always)]
    pub(crate) fn top(&self) -> c_int {
        self.top
    }

    /// `idx` if it is acceptable (a slot of the frame or above it within
    /// room, read as nil, or a pseudo-index); else a panic.
    #[inline(always)]
    pub(super) fn check(&self, idx: c_int) -> c_int {
        let ok = if idx > 0 {
            idx <= self.room
        } else if idx > ffi::LUA_REGISTRYINDEX {
            idx != 0 && -idx <= self.top
        } else {
            // The registry and upvalues 1..=255 (a missing one reads nil).
            idx >= ffi::LUA_REGISTRYINDEX - 255
        };
        if !ok {
            misuse("index out of the frame");
        }
        idx
    }

    /// `idx` (acceptable) as a table, else a panic.
    #[inline(always)]
    pub(super) fn table(&self, idx: c_int) -> c_int {
        if !self.is_table(idx) {
            misuse("not a table");
        }
        idx
    }

    /// `idx` (acceptable) as a table of the frame (not the registry or an
    /// upvalue, whose contents raw code relies on), else a panic.
    #[inline(always)]
    pub(super) fn frame_table(&self, idx: c_int) -> c_int {
        if idx <= ffi::LUA_REGISTRYINDEX {
            misuse("writing to the registry or an upvalue");
        }
        self.table(idx)
    }

    /// Make sure `n` more slots can be pushed.
    #[inline(always)]
    pub(crate) fn reserve(&mut self, n: c_int) -> bool {
        if self.top + n <= self.room {
            return true;
        }
        self.grow(n)
    }

    #[inline(never)]
    fn grow(&mut self, n: c_int) -> bool {
        // More than Lua's whole stack (LUAI_MAXSTACK) never fits.
        if !(0..=1_000_000).contains(&n) {
            return false;
        }
        // SAFETY: reports failure instead of raising.
        if unsafe { ffi::lua_checkstack(self.state, n + 8) } == 0 {
            return false;
        }
        self.room = self.top + n + 8;
        true
    }

    /// Room for one more push, else a panic.
    #[inline(always)]
    pub(super) fn one_more(&mut self) {
        if self.top >= self.room && !self.grow(1) {
            misuse("stack overflow");
        }
        self.top += 1;
    }

    /// `n` slots are popped; none of them an argument.
    #[inline(always)]
    pub(super) fn pops(&mut self, n: c_int) {
        if self.top - n < self.base {
            misuse("popping an argument");
        }
        self.top -= n;
    }

    // Reads.

    /// The type of the value at `idx` (`ffi::LUA_T*`; `LUA_TNONE` above
    /// the top).
    #[inline(always)]
    pub(crate) fn ty(&self, idx: c_int) -> c_int {
        // SAFETY: an acceptable index.
        unsafe { ffi::lua_type(self.state, self.check(idx)) }
    }

    #[inline(always)]
    pub(crate) fn is_table(&self, idx: c_int) -> bool {
        self.ty(idx) == ffi::LUA_TTABLE
    }

    /// The value at `idx`; a string's bytes are borrowed from the handle,
    /// so the slot cannot be popped or replaced while they are held.
    #[inline(always)]
    pub(crate) fn view(&self, idx: c_int) -> View<'_> {
        // SAFETY: an acceptable index; the bytes live while the value
        // stays in its slot, which the borrow of `self` guarantees.
        unsafe { view::view(self.state, self.check(idx)) }
    }

    /// [`Stack::view`] of argument `idx` (nil past the last): the handle
    /// never pops or replaces an argument, so its bytes live for the call.
    #[inline(always)]
    pub(crate) fn arg(&self, idx: c_int) -> View<'l> {
        if idx < 1 || idx > self.base {
            return View::Nil;
        }
        // SAFETY: a slot of the frame below every push; the string in it
        // stays there (anchored) until the function returns.
        unsafe { view::view(self.state, idx) }
    }

    /// The bytes of argument `idx` if it is a string (a number is not
    /// converted).
    #[inline(always)]
    pub(crate) fn arg_str(&self, idx: c_int) -> Option<&'l [u8]> {
        match self.arg(idx) {
            View::Str(b) => Some(b),
            _ => None,
        }
    }

    /// The value's address, for identity only (`lua_topointer`).
    #[inline(always)]
    pub(crate) fn to_pointer(&self, idx: c_int) -> *const c_void {
        // SAFETY: an acceptable index.
        unsafe { ffi::lua_topointer(self.state, self.check(idx)) }
    }

    /// The integer at `idx` (an upvalue, say), if it is one: a single
    /// call, where [`Stack::view`] reads the type first.
    #[inline(always)]
    pub(crate) fn int_at(&self, idx: c_int) -> Option<i64> {
        let idx = self.check(idx);
        let mut is_num: c_int = 0;
        // SAFETY: an acceptable index; the conversion raises nothing.
        let n = unsafe { ffi::lua_tointegerx(self.state, idx, &mut is_num) };
        (is_num != 0).then_some(n)
    }

    /// Primitive equality (`rawequal`).
    #[inline(always)]
    pub(crate) fn raw_equal(&self, a: c_int, b: c_int) -> bool {
        // SAFETY: acceptable indices.
        unsafe { ffi::lua_rawequal(self.state, self.check(a), self.check(b)) != 0 }
    }

    /// `#v` without metamethods (0 for what has no length).
    #[inline(always)]
    pub(crate) fn raw_len(&self, idx: c_int) -> usize {
        // SAFETY: an acceptable index.
        unsafe { ffi::lua_rawlen(self.state, self.check(idx)) }
    }

    /// The absolute index of `idx` (pseudo-indices as they are).
    #[inline(always)]
    pub(crate) fn abs(&self, idx: c_int) -> c_int {
        let idx = self.check(idx);
        if idx < 0 && idx > ffi::LUA_REGISTRYINDEX {
            self.top + 1 + idx
        } else {
            idx
        }
    }

    // Pushes that do not allocate.

    #[inline(always)]
    pub(crate) fn push_int(&mut self, n: i64) {
        self.one_more();
        // SAFETY: room checked.
        unsafe { ffi::lua_pushinteger(self.state, n) }
    }

    #[inline(always)]
    pub(crate) fn push_float(&mut self, n: f64) {
        self.one_more();
        // SAFETY: room checked.
        unsafe { ffi::lua_pushnumber(self.state, n) }
    }

    #[inline(always)]
    pub(crate) fn push_nil(&mut self) {
        self.one_more();
        // SAFETY: room checked.
        unsafe { ffi::lua_pushnil(self.state) }
    }

    #[inline(always)]
    pub(crate) fn push_bool(&mut self, b: bool) {
        self.one_more();
        // SAFETY: room checked; a boolean allocates nothing.
        unsafe { ffi::lua_pushboolean(self.state, c_int::from(b)) }
    }

    /// Push a copy of the value at `idx`.
    #[inline(always)]
    pub(crate) fn push_value(&mut self, idx: c_int) {
        let idx = self.check(idx);
        self.one_more();
        // SAFETY: an acceptable index, room checked.
        unsafe { ffi::lua_pushvalue(self.state, idx) }
    }

    /// Pop down to `n` slots (or push nils up to it); never below the
    /// arguments.
    #[inline(always)]
    pub(crate) fn set_top(&mut self, n: c_int) {
        if n < self.base || (n > self.top && !self.reserve(n - self.top)) {
            misuse("set_top out of the frame");
        }
        self.top = n;
        // SAFETY: `n` is within the frame's room and keeps the arguments.
        unsafe { ffi::lua_settop(self.state, n) }
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self, n: c_int) {
        self.set_top(self.top - n);
    }

    // Table reads: raw, so no metamethod runs, and none allocates.

    /// Replace the key on top with `t[key]`; its type.
    #[inline(always)]
    pub(crate) fn raw_get(&mut self, t: c_int) -> c_int {
        let t = self.table(t);
        self.pops(1);
        self.top += 1;
        // SAFETY: a table, and a key above the arguments.
        unsafe { ffi::lua_rawget(self.state, t) }
    }

    /// Call `f` with the slots of each key and value of the table at `t`,
    /// raw (no `__pairs`), in `lua_next` order. `f` may push and read, but
    /// must leave the frame as it found it (checked): `lua_next` needs the
    /// key where it left it, unconverted, and a [`View`] never converts.
    pub(crate) fn entries<E>(
        &mut self,
        t: c_int,
        mut f: impl FnMut(&mut Stack<'l>, c_int, c_int) -> Result<(), E>,
    ) -> Result<(), E> {
        let t = self.table(self.abs(t));
        let key = self.top + 1;
        self.one_more();
        // SAFETY: room checked.
        unsafe { ffi::lua_pushnil(self.state) };
        loop {
            if !self.reserve(1) {
                misuse("stack overflow");
            }
            // SAFETY: a table; on top the key the last call left (or nil),
            // unchanged, and room for the value. It raises only for a key
            // not in the table, which an unchanged key never is.
            if unsafe { ffi::lua_next(self.state, t) } == 0 {
                self.top -= 1;
                return Ok(());
            }
            self.top += 1;
            let r = f(self, key, key + 1);
            if self.top != key + 1 {
                misuse("an entry's slots were changed");
            }
            if let Err(e) = r {
                self.set_top(key - 1);
                return Err(e);
            }
            self.pop(1);
        }
    }

    /// Push `t[i]`; its type.
    #[inline(always)]
    pub(crate) fn raw_geti(&mut self, t: c_int, i: i64) -> c_int {
        let t = self.table(t);
        self.one_more();
        // SAFETY: a table, room checked.
        unsafe { ffi::lua_rawgeti(self.state, t, i) }
    }

    /// Push `t[key]` for a light userdata key, the address of the
    /// caller's own static (no other code can name it); its type.
    #[inline(always)]
    pub(crate) fn raw_getp(&mut self, t: c_int, key: &'static u8) -> c_int {
        let t = self.table(t);
        self.one_more();
        // SAFETY: a table, room checked; the key is only compared.
        unsafe { ffi::lua_rawgetp(self.state, t, (key as *const u8).cast()) }
    }

    /// Push the metatable of the value at `idx`, if it has one.
    #[inline(always)]
    pub(crate) fn get_metatable(&mut self, idx: c_int) -> bool {
        let idx = self.check(idx);
        if !self.reserve(1) {
            misuse("stack overflow");
        }
        // SAFETY: an acceptable index, room checked.
        let has = unsafe { ffi::lua_getmetatable(self.state, idx) } != 0;
        self.top += c_int::from(has);
        has
    }

    /// Lift the heap cap for `f`, whose pushes may then allocate: they
    /// cannot raise a memory error (a real out-of-memory aborts). Over the
    /// cap after a full collection, what `f` pushed is dropped and the
    /// `Err` says so (`vm::unlimited` for mlua calls).
    pub(crate) fn lifted<R>(
        &mut self,
        f: impl FnOnce(&mut Lifted<'_, 'l>) -> R,
    ) -> Result<R, String> {
        let lua = self.lua();
        let limit = lua.set_memory_limit(0).map_err(|e| e.to_string())?;
        let top = self.top;
        let result = {
            let guard = Restore { lua, limit };
            // SAFETY (of what `Lifted` offers): the cap is lifted until
            // `guard` drops, after `f` returns or unwinds.
            let mut lifted = Lifted(self);
            let r = f(&mut lifted);
            drop(guard);
            r
        };
        let over = || limit != 0 && lua.used_memory() > limit;
        if over() {
            // A full collection raises nothing: Lua 5.4 turns finalizer
            // errors into warnings.
            // SAFETY: a collection leaves the stack as it is.
            unsafe { ffi::lua_gc(self.state, ffi::LUA_GCCOLLECT) };
            if over() {
                self.set_top(top.max(self.base));
                // SAFETY: as above.
                unsafe { ffi::lua_gc(self.state, ffi::LUA_GCCOLLECT) };
                return Err(cove_core::OUT_OF_HEAP.to_string());
            }
        }
        Ok(result)
    }
}

/// Puts the heap cap back.
struct Restore<'a> {
    lua: &'a Lua,
    limit: usize,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        let _ = self.lua.set_memory_limit(self.limit);
    }
}

/// A [`Stack`] while the heap cap is lifted ([`Stack::lifted`]): these
/// operations allocate, which under the cap could raise a memory error
/// (a `longjmp` over Rust frames); lifted they cannot.
pub(crate) struct Lifted<'a, 'l>(&'a mut Stack<'l>);

impl<'l> Deref for Lifted<'_, 'l> {
    type Target = Stack<'l>;
    fn deref(&self) -> &Stack<'l> {
        self.0
    }
}

impl<'l> DerefMut for Lifted<'_, 'l> {
    fn deref_mut(&mut self) -> &mut Stack<'l> {
        self.0
    }
}

/// Largest hash part asked for: more would raise "table overflow".
const MAX_REC: usize = 1 << 26;

impl<'l> Lifted<'_, 'l> {
    #[inline(always)]
    pub(crate) fn push_bytes(&mut self, b: &[u8]) {
        self.one_more();
        // SAFETY: room checked; lifted, the allocation cannot raise.
        unsafe { ffi::lua_pushlstring(self.state, b.as_ptr().cast(), b.len()) };
    }

    /// Push a new table with room for `narr` items and `nrec` fields.
    #[inline(always)]
    pub(crate) fn new_table(&mut self, narr: usize, nrec: usize) {
        self.one_more();
        let (narr, nrec) = (narr.min(MAX_REC) as c_int, nrec.min(MAX_REC) as c_int);
        // SAFETY: room checked; sizes within Lua's bounds; lifted.
        unsafe { ffi::lua_createtable(self.state, narr, nrec) };
    }

    /// `t[k] = v` with the key and value on top (popped). The key must be
    /// neither nil nor NaN (Lua raises for those): else a panic.
    #[inline(always)]
    pub(crate) fn raw_set(&mut self, t: c_int) {
        let t = self.frame_table(t);
        let key_ok = match self.ty(-2) {
            ffi::LUA_TNIL | ffi::LUA_TNONE => false,
            // SAFETY: a number at an acceptable index.
            ffi::LUA_TNUMBER => unsafe {
                ffi::lua_isinteger(self.state, -2) != 0
                    || !ffi::lua_tonumberx(self.state, -2, std::ptr::null_mut()).is_nan()
            },
            _ => true,
        };
        if !key_ok {
            misuse("a nil or NaN key");
        }
        self.pops(2);
        // SAFETY: a table, a valid key, lifted.
        unsafe { ffi::lua_rawset(self.state, t) }
    }

    /// `t[i] = v` with the value on top (popped).
    #[inline(always)]
    pub(crate) fn raw_seti(&mut self, t: c_int, i: i64) {
        let t = self.abs(t);
        self.frame_table(t);
        self.pops(1);
        // SAFETY: a table; lifted.
        unsafe { ffi::lua_rawseti(self.state, t, i) }
    }

    /// `t[k] = v` for string bytes `k` and `v`.
    #[inline(always)]
    pub(crate) fn set_bytes(&mut self, t: c_int, k: &[u8], v: &[u8]) {
        let t = self.abs(t);
        self.frame_table(t);
        self.push_bytes(k);
        self.push_bytes(v);
        self.pops(2);
        // SAFETY: a table and a string key; lifted.
        unsafe { ffi::lua_rawset(self.state, t) }
    }

    /// `t[key] = v` for a light userdata key (see [`Stack::raw_getp`]),
    /// with the value on top (popped).
    #[inline(always)]
    pub(crate) fn raw_setp(&mut self, t: c_int, key: &'static u8) {
        let t = self.frame_table(t);
        self.pops(1);
        // SAFETY: a table, lifted; the key is only a key.
        unsafe { ffi::lua_rawsetp(self.state, t, (key as *const u8).cast()) }
    }

    /// `t.name = v` raw, with the value on top (popped).
    #[inline(always)]
    pub(crate) fn set_field(&mut self, t: c_int, name: &str) {
        let t = self.abs(t);
        self.push_bytes(name.as_bytes());
        self.push_value(-2);
        self.raw_set(t);
        self.pop(1);
    }
}
