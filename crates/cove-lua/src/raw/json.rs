//! Encoding a Lua value as JSON straight from the Lua stack (`json.encode`,
//! `res:json`, the templates' `json` filter; packed `db.query` rows:
//! rows.rs).
//!
//! Through mlua's safe API every table entry read or written creates and
//! drops a registry reference, and with a heap cap set each write runs in
//! its own protected call: ~1.5k instructions per entry. Here the same work
//! costs ~100. Each `unsafe` block states why it cannot raise a Lua error
//! across Rust frames.
#![allow(unsafe_code)]

use std::ffi::c_int;

use mlua::{ffi, Lua, Value};

use cove_caps::json::{
    put_float, put_int, put_string, string_room, write_float, write_int, write_string, JsonError,
    MAX_FLOAT_LEN, MAX_INT_LEN,
};
use cove_core::Room;

use super::layout::{self, Scalar};
use super::rows::Meta;
use super::view::{stack_bytes, view, View};
use super::Stack;

/// Deepest table nesting `json.encode` accepts.
const MAX_DEPTH: usize = 128;

/// Encode `value` as JSON with Hull's Lua rules (see json.rs).
pub(crate) fn encode(lua: &Lua, value: &Value) -> Result<Vec<u8>, JsonError> {
    let mut result = Err(JsonError::TooDeep);
    // SAFETY: the walker only reads, but for the fields it sets on req
    // tables, with the heap cap lifted (request::fill). `lua_next` on keys
    // taken from the same table, `lua_rawlen`, `lua_rawgeti` and
    // `lua_tolstring` on values that are already strings neither allocate
    // nor raise, and the stack is grown with `lua_checkstack` (which reports
    // failure, never raises) before each push. So no Lua error can unwind
    // through these frames.
    let called = unsafe {
        lua.exec_raw::<()>(value, |state| {
            result = encode_at(state, ffi::lua_gettop(state));
        })
    };
    called.map_err(|_| JsonError::TooDeep)?;
    result
}

/// Encode the value at `idx` of the frame (the frame is left as it was).
pub(crate) fn encode_slot(s: &mut Stack<'_>, idx: c_int) -> Result<Vec<u8>, JsonError> {
    let idx = s.abs(idx);
    let top = s.top;
    // SAFETY: as for [`encode`]; `idx` is a slot of the frame, or above
    // its top within room (read as nil). A walk that succeeds leaves the
    // stack as it was; what one that fails leaves is popped.
    unsafe {
        let result = encode_at(s.state, idx);
        if result.is_err() {
            ffi::lua_settop(s.state, top);
        }
        result
    }
}

/// Encode the value at stack index `idx` (absolute). Same safety argument
/// as [`encode`]: the walk only reads and never raises.
pub(super) unsafe fn encode_at(
    state: *mut ffi::lua_State,
    idx: c_int,
) -> Result<Vec<u8>, JsonError> {
    // The staging vectors keep their capacity from one call to the next.
    let mut enc = SCRATCH.with(|s| s.take()).unwrap_or_default();
    // No allocation yet: an object of scalars and a query result reserve
    // all they need at once (a first 256 bytes would be moved again).
    enc.buf = Vec::new();
    let result = enc.walk(state, idx, 0);
    let out = std::mem::take(&mut enc.buf);
    enc.members.clear();
    SCRATCH.with(|s| s.set(Some(enc)));
    result.map(|()| out)
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Encoder>> = const { std::cell::Cell::new(None) };
}

/// One output buffer for the whole value. An object's keys and values stay
/// on the Lua stack while its keys are sorted, so nothing is staged or copied.
#[derive(Default)]
struct Encoder {
    buf: Vec<u8>,
    /// Stack slots of the keys of the objects being encoded, innermost last.
    members: Vec<Member>,
    /// The entries of an object read straight from its table (layout.rs).
    scalars: Vec<layout::Member>,
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
        match view(state, idx) {
            View::Nil => out.extend_from_slice(b"null"),
            View::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
            View::Int(n) => write_int(out, n),
            View::Float(f) => write_float(out, f)?,
            View::Str(bytes) => write_string(out, bytes),
            View::Table => self.table(state, idx, depth + 1)?,
            other => return Err(JsonError::Unsupported(other.type_name())),
        }
        Ok(())
    }

    unsafe fn table(
        &mut self,
        state: *mut ffi::lua_State,
        idx: c_int,
        depth: usize,
    ) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        // The usual object: no metatable, no array part, scalar members.
        self.scalars.clear();
        if layout::plain_scalar_members(ffi::lua_topointer(state, idx), &mut self.scalars) {
            return self.scalar_object();
        }
        if ffi::lua_checkstack(state, 8) == 0 {
            return Err(JsonError::TooDeep);
        }
        match super::rows::meta_at(state, idx) {
            Meta::Packed(block) => return super::rows_json::write_json(block, &mut self.buf),
            // A req table is encoded with every field Hull's has, set here.
            // Setting them allocates and may run the collector, which is
            // safe at any depth: every table above has been listed whole
            // (no `lua_next` is under way) and all it holds is on the stack.
            Meta::Other => {
                let mut s = Stack::within(state);
                crate::req::fill_if_req(&mut s, idx);
            }
            _ => {}
        }
        // What follows writes piece by piece.
        if self.buf.capacity() == 0 {
            self.buf.reserve(256);
        }
        let len = ffi::lua_rawlen(state, idx);
        if len > 0 {
            return self.array(state, idx, len, depth);
        }
        self.scalars.clear();
        if layout::scalar_members(ffi::lua_topointer(state, idx), &mut self.scalars) {
            return self.scalar_object();
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

    /// Write the object [`layout::scalar_members`] read; its table is on the
    /// stack, and nothing runs while it is written.
    unsafe fn scalar_object(&mut self) -> Result<(), JsonError> {
        let out = &mut self.buf;
        if self.scalars.is_empty() {
            out.extend_from_slice(b"[]");
            return Ok(());
        }
        self.scalars
            .sort_unstable_by(|a, b| super::rows_json::key_order(a.key(), b.key()));
        // What it takes when no text needs escaping: no write below grows `out`.
        let need: usize = self
            .scalars
            .iter()
            .map(|m| m.len + 4 + room_for(m.value))
            .sum();
        let mut room = Room::new(out, need + 2);
        for (i, m) in self.scalars.iter().enumerate() {
            room.byte(if i == 0 { b'{' } else { b',' });
            put_string(&mut room, m.key());
            room.byte(b':');
            match m.value {
                Scalar::Bool(b) => room.put(if b { b"true" } else { b"false" }),
                Scalar::Int(n) => put_int(&mut room, n),
                Scalar::Float(f) => put_float(&mut room, f)?,
                Scalar::Str(p, n) => put_string(&mut room, std::slice::from_raw_parts(p, n)),
            }
        }
        room.byte(b'}');
        Ok(())
    }

    unsafe fn array(
        &mut self,
        state: *mut ffi::lua_State,
        idx: c_int,
        len: usize,
        depth: usize,
    ) -> Result<(), JsonError> {
        // Every key must be an integer in 1..=len: count them. A key past
        // `len` is a hole too: `len` is a border (`t[len + 1]` is nil), and
        // with keys 2..=4 and 6 it can be 4, matching the count.
        let mut count = 0usize;
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, idx) != 0 {
            count += 1;
            let is_integer =
                ffi::lua_type(state, -2) == ffi::LUA_TNUMBER && ffi::lua_isinteger(state, -2) != 0;
            let key = match is_integer {
                true => ffi::lua_tointegerx(state, -2, std::ptr::null_mut()),
                false => 0,
            };
            if key < 1 {
                return Err(JsonError::MixedKeys);
            }
            if key as u64 > len as u64 {
                return Err(JsonError::SparseArray);
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

/// Room for a scalar's JSON: all of it when its text needs no escaping.
fn room_for(v: Scalar) -> usize {
    match v {
        Scalar::Bool(_) => 5,
        Scalar::Int(_) => MAX_INT_LEN,
        Scalar::Float(_) => MAX_FLOAT_LEN,
        Scalar::Str(_, n) => string_room(n),
    }
}
