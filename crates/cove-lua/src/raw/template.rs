//! The template renderer's view of Lua values (`hull.template`,
//! template.rs): each value is a stack slot, fields are read with
//! `lua_rawget` using keys kept ready as Lua strings (one per interned
//! name, in a table indexed by the name's id), and the slots made for one
//! output or loop item are popped right after it. Through mlua's handles
//! each field read cost ~1k instructions; here it is a few dozen. Reads are
//! raw: an `__index` metamethod on template data is not consulted.
#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::ffi::c_int;

use mlua::ffi;

use cove_template::{render_into, Flavor, Host, ItemKey, Key, Shape, Template};

use super::json::encode_at;
use super::view::{stack_bytes, View};
use super::Stack;

/// Per name id: the render (`generation`) that pushed the key string and
/// its stack slot. Kept between renders so no render allocates it.
#[derive(Default)]
pub(crate) struct Slots {
    slots: RefCell<Vec<(u32, c_int)>>,
    generation: Cell<u32>,
}

/// Render `t` with the value at `data` into `out`; `keys` is the slot (or
/// upvalue) of the table of name strings (`keys[id + 1]`), which must hold
/// the first `ready` names. Uses only functions that cannot raise a Lua
/// error (raw reads, `lua_next` on keys it got from the same table,
/// `lua_checkstack`, `lua_settop` on plain values) and strings already on
/// the stack; the stack is as it found it when it returns.
pub(crate) fn render_at(
    s: &mut Stack<'_>,
    slots: &Slots,
    ready: usize,
    t: &Template,
    data: c_int,
    keys: c_int,
    out: &mut Vec<u8>,
) -> Result<(), cove_template::Error> {
    let (data, keys) = (s.abs(data), s.abs(keys));
    if !s.is_table(keys) {
        return Err(cove_template::Error::bare(
            cove_template::ErrorKind::Render,
            "no table of names",
        ));
    }
    let Ok(mut slots_now) = slots.slots.try_borrow_mut() else {
        return Err(cove_template::Error::bare(
            cove_template::ErrorKind::Render,
            "called while rendering",
        ));
    };
    slots_now.resize(ready, (0, 0));
    let mut generation = slots.generation.get().wrapping_add(1);
    if generation == 0 {
        // Wrapped: entries of an old render must not look current.
        slots_now.fill((0, 0));
        generation = 1;
    }
    slots.generation.set(generation);
    let state = s.state();
    let top = s.top();
    let mut host = LuaHost {
        state,
        data: Slot {
            idx: data,
            ty: s.ty(data),
        },
        keys,
        ready,
        slots: &mut slots_now,
        generation,
        top,
        room: top,
        kept: Vec::new(),
    };
    let result = render_into(t, &mut host, out);
    // SAFETY: the host pushed only above `top`, and pops back to it.
    unsafe { ffi::lua_settop(state, top) };
    result
}

/// A value: its stack slot and its type, known from the call that pushed
/// it (so reading a value's shape needs no `lua_type` call).
#[derive(Clone, Copy)]
struct Slot {
    idx: c_int,
    ty: c_int,
}

/// A nil that has no slot.
const NIL: Slot = Slot {
    idx: 0,
    ty: ffi::LUA_TNIL,
};

/// Values are stack slots. The host keeps its own count of the stack top
/// and of the room it made, so marks, releases and most pushes need no call
/// into Lua to check.
struct LuaHost<'a> {
    state: *mut ffi::lua_State,
    data: Slot,
    keys: c_int,
    ready: usize,
    /// Name id → (generation, slot) of the key strings `prepare` pushed.
    slots: &'a mut [(u32, c_int)],
    generation: u32,
    top: c_int,
    room: c_int,
    /// Per running `{% for x in … %}`, innermost last: the list's slot and
    /// the slot below its items when `items` kept them on the stack.
    kept: Vec<Option<(c_int, c_int)>>,
}

/// The most items a loop keeps on the Lua stack.
const KEEP: usize = 1024;

impl LuaHost<'_> {
    /// Make room for `n` more slots (in steps, so most calls are a compare).
    #[inline]
    fn reserve(&mut self, n: c_int) -> bool {
        if self.top + n <= self.room {
            return true;
        }
        // SAFETY: growing the stack reports failure instead of raising.
        if unsafe { ffi::lua_checkstack(self.state, n + 32) } == 0 {
            return false;
        }
        self.room = self.top + n + 32;
        true
    }

    /// Turn a packed `db.query` result into plain rows before reading it
    /// raw (rows.rs); other values are left alone.
    #[inline]
    fn plain(&mut self, v: &Slot) {
        if v.ty == ffi::LUA_TTABLE && self.reserve(4) {
            // SAFETY: with the heap cap lifted nothing here raises; the
            // stack above `top` is scratch space, restored on return.
            unsafe { super::rows::unpack_uncapped(self.state, v.idx) };
        }
    }

    /// Push `obj[key]`, read raw; returns its type.
    #[inline]
    fn raw_field(&mut self, obj: &Slot, key: &Key) -> c_int {
        let id = key.id as usize;
        // SAFETY: the key is a string on the stack since `prepare`, or in
        // `keys` (or, past the interner's bound, pushed here: a short
        // string), and `lua_rawget` calls no metamethod.
        unsafe {
            match self.slots.get(id) {
                Some(&(g, idx)) if g == self.generation => ffi::lua_pushvalue(self.state, idx),
                _ if id < self.ready => {
                    ffi::lua_rawgeti(self.state, self.keys, id as ffi::lua_Integer + 1);
                }
                _ => push_name(self.state, &key.name),
            }
            ffi::lua_rawget(self.state, obj.idx)
        }
    }

    /// A field read found nil (pushed): if `obj` is a req table, its fields
    /// built on first read are set and the field is read again. Out of
    /// line: only a missing field pays for the check.
    #[cold]
    #[inline(never)]
    fn missing_field(&mut self, obj: &Slot, key: &Key) -> c_int {
        if !self.reserve(4) {
            return ffi::LUA_TNIL;
        }
        // SAFETY: the nil just pushed is popped; `fill` keeps the stack
        // (through a handle that keeps every slot the host holds) and,
        // with the heap cap lifted, raises nothing.
        unsafe {
            ffi::lua_settop(self.state, -2);
            if crate::req::fill_if_req(&mut Stack::within(self.state), obj.idx) {
                return self.raw_field(obj, key);
            }
            ffi::lua_pushnil(self.state);
        }
        ffi::LUA_TNIL
    }

    /// The value of type `ty` just pushed (a nil keeps its slot too: the
    /// next release pops it with the rest, one `lua_settop` less).
    #[inline]
    fn pushed(&mut self, ty: c_int) -> Slot {
        self.top += 1;
        Slot { idx: self.top, ty }
    }
}

/// Push a name past the interner's bound as a new string, with the heap
/// cap lifted so that the allocation cannot raise (else nil: found nowhere).
///
/// # Safety
/// One slot is free on `state`'s stack.
#[cold]
#[inline(never)]
unsafe fn push_name(state: *mut ffi::lua_State, name: &str) {
    let lua = mlua::Lua::get_or_init_from_ptr(state);
    match lua.set_memory_limit(0) {
        Ok(limit) => {
            ffi::lua_pushlstring(state, name.as_ptr().cast(), name.len());
            let _ = lua.set_memory_limit(limit);
        }
        Err(_) => ffi::lua_pushnil(state),
    }
}

/// A Lua type as the renderer's messages name it.
pub(crate) fn kind_name(ty: c_int) -> &'static str {
    match ty {
        ffi::LUA_TNIL | ffi::LUA_TNONE => "nil",
        ffi::LUA_TSTRING => "a string",
        ffi::LUA_TNUMBER => "a number",
        ffi::LUA_TBOOLEAN => "a boolean",
        ffi::LUA_TFUNCTION => "a function",
        ffi::LUA_TTABLE => "a table",
        _ => "a userdata",
    }
}

impl Host for LuaHost<'_> {
    type Value = Slot;

    fn flavor(&self) -> Flavor {
        Flavor::Lua
    }

    fn data(&mut self) -> Slot {
        self.data
    }

    #[inline]
    fn field(&mut self, obj: &Slot, key: &Key) -> Slot {
        // No `plain` here: a name read from a packed result finds nothing,
        // as it would in the plain array (only integer keys), and this is
        // the renderer's hottest read.
        if obj.ty != ffi::LUA_TTABLE || !self.reserve(1) {
            return NIL;
        }
        let mut ty = self.raw_field(obj, key);
        if ty == ffi::LUA_TNIL {
            ty = self.missing_field(obj, key);
        }
        self.pushed(ty)
    }

    fn prepare(&mut self, keys: &[Key]) {
        // A `lua_pushvalue` from a slot per read instead of a `lua_rawgeti`
        // from the keys table (~35 instructions less a read).
        if !self.reserve(keys.len() as c_int) {
            return;
        }
        for k in keys {
            let id = k.id as usize;
            if id >= self.ready || id >= self.slots.len() {
                continue;
            }
            // SAFETY: a raw integer read from the keys table, room reserved.
            unsafe { ffi::lua_rawgeti(self.state, self.keys, id as ffi::lua_Integer + 1) };
            self.top += 1;
            self.slots[id] = (self.generation, self.top);
        }
    }

    #[inline]
    fn shape(&mut self, v: &Slot) -> Shape<'_> {
        // The type was read when the slot was pushed: the one view reads
        // the value with it (no second `lua_type`).
        // SAFETY: `v.ty` is the type of the value at `v.idx`, which stays
        // there (and so do a string's bytes) for as long as this borrow of
        // the host.
        match unsafe { super::view::of_type(self.state, v.idx, v.ty) } {
            View::Nil => Shape::Nil,
            View::Bool(b) => Shape::Bool(b),
            View::Int(n) => Shape::Int(n),
            View::Float(n) => Shape::Float(n),
            View::Str(b) => Shape::Str(b.into()),
            View::Table | View::Function | View::Thread | View::Userdata => Shape::Table,
        }
    }
    fn items(&mut self, v: &Slot) -> Result<usize, String> {
        if v.ty != ffi::LUA_TTABLE {
            return Err(format!("cannot loop over {}", kind_name(v.ty)));
        }
        self.plain(v);
        // `ipairs`: up to the first nil. The items counted stay on the stack
        // for `item` (one read per item, no pop per count), up to `KEEP`.
        let base = self.top;
        let mut n = 0;
        while n < KEEP && self.reserve(1) {
            // SAFETY: a raw integer read, room reserved.
            let ty = unsafe { ffi::lua_rawgeti(self.state, v.idx, n as ffi::lua_Integer + 1) };
            self.top += 1;
            if ty == ffi::LUA_TNIL {
                self.kept.push(Some((v.idx, base)));
                return Ok(n);
            }
            n += 1;
        }
        self.release(base as usize);
        self.kept.push(None);
        if !self.reserve(1) {
            return Err("Lua stack exhausted".into());
        }
        // Too long to keep: counted, each popped at once.
        // SAFETY: raw integer reads, each popped at once.
        unsafe {
            while ffi::lua_rawgeti(self.state, v.idx, n as ffi::lua_Integer + 1) != ffi::LUA_TNIL {
                ffi::lua_settop(self.state, self.top);
                n += 1;
            }
            ffi::lua_settop(self.state, self.top);
        }
        Ok(n)
    }

    #[inline]
    fn item(&mut self, v: &Slot, i: usize) -> Slot {
        if let Some(&Some((table, base))) = self.kept.last() {
            if table == v.idx {
                let idx = base + 1 + i as c_int;
                // SAFETY: the item's slot, kept since `items` (the
                // renderer releases nothing below a loop while it runs).
                let ty = unsafe { ffi::lua_type(self.state, idx) };
                return Slot { idx, ty };
            }
        }
        if !self.reserve(1) {
            return NIL;
        }
        // SAFETY: a raw integer read from a table.
        let ty = unsafe { ffi::lua_rawgeti(self.state, v.idx, i as ffi::lua_Integer + 1) };
        self.pushed(ty)
    }

    fn end_items(&mut self, _v: &Slot) {
        self.kept.pop();
    }

    fn entries(&mut self, v: &Slot) -> Result<Vec<(ItemKey, Slot)>, String> {
        if v.ty != ffi::LUA_TTABLE {
            return Err(format!("cannot loop over {}", kind_name(v.ty)));
        }
        self.plain(v);
        if self.reserve(4) {
            // SAFETY: `fill` keeps the stack and, uncapped, raises nothing.
            crate::req::fill_if_req(unsafe { &mut Stack::within(self.state) }, v.idx);
        }
        let state = self.state;
        let mut out = Vec::new();
        // SAFETY: `lua_next` with the key it returned last (copied, so the
        // original and its value stay on the stack as the entry's slots);
        // keys are read without conversion.
        unsafe {
            ffi::lua_pushnil(state);
            loop {
                if ffi::lua_checkstack(state, 3) == 0 {
                    return Err("table too large for the Lua stack".into());
                }
                if ffi::lua_next(state, v.idx) == 0 {
                    break;
                }
                let value = ffi::lua_gettop(state);
                let key = match ffi::lua_type(state, value - 1) {
                    ffi::LUA_TNUMBER if ffi::lua_isinteger(state, value - 1) != 0 => Some(
                        ItemKey::Int(ffi::lua_tointegerx(state, value - 1, std::ptr::null_mut())),
                    ),
                    ffi::LUA_TSTRING => Some(ItemKey::Str(
                        String::from_utf8_lossy(stack_bytes(state, value - 1)).into_owned(),
                    )),
                    _ => None,
                };
                if let Some(key) = key {
                    let ty = ffi::lua_type(state, value);
                    out.push((key, Slot { idx: value, ty }));
                }
                ffi::lua_pushvalue(state, value - 1);
            }
            self.top = ffi::lua_gettop(state);
            self.room = self.top;
        }
        // `pairs` has no order; integer keys ascending, then names sorted,
        // so a page renders the same on every worker and every run.
        out.sort_by(|(a, _), (b, _)| match (a, b) {
            (ItemKey::Int(x), ItemKey::Int(y)) => x.cmp(y),
            (ItemKey::Int(_), ItemKey::Str(_)) => std::cmp::Ordering::Less,
            (ItemKey::Str(_), ItemKey::Int(_)) => std::cmp::Ordering::Greater,
            (ItemKey::Str(x), ItemKey::Str(y)) => x.cmp(y),
        });
        Ok(out)
    }

    fn count(&mut self, v: &Slot) -> usize {
        if v.ty != ffi::LUA_TTABLE {
            return 0;
        }
        self.plain(v);
        // SAFETY: `#t` without metamethods.
        unsafe { ffi::lua_rawlen(self.state, v.idx) as usize }
    }

    fn json(&mut self, v: &Slot, out: &mut Vec<u8>) -> Result<(), String> {
        if v.idx == 0 || v.ty == ffi::LUA_TNIL {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        // SAFETY: the JSON walker only reads (json.rs) and leaves the stack
        // as it was on success; on failure the render ends (and pops).
        let bytes = unsafe { encode_at(self.state, v.idx) }.map_err(|e| e.to_string())?;
        out.extend_from_slice(&bytes);
        Ok(())
    }

    fn display(&mut self, v: &Slot, out: &mut Vec<u8>) {
        // `tostring` of a table or function (no `__tostring`: it could raise).
        // SAFETY: reading the pointer identity of a value.
        let ptr = unsafe { ffi::lua_topointer(self.state, v.idx) };
        let kind = kind_name(v.ty).trim_start_matches("a ");
        out.extend_from_slice(format!("{kind}: {ptr:p}").as_bytes());
    }

    const RELEASES: bool = true;

    #[inline]
    fn mark(&mut self) -> usize {
        self.top as usize
    }

    #[inline]
    fn release(&mut self, mark: usize) {
        let mark = mark as c_int;
        if mark != self.top {
            // SAFETY: popping plain values this host pushed above `mark`.
            unsafe { ffi::lua_settop(self.state, mark) };
            self.top = mark;
        }
    }
}
