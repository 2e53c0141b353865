//! `db.query` results that stay packed until a script looks inside.
//!
//! A Lua table per row costs ~2k instructions, and a handler that hands the
//! result straight to `res:json` walks every one of them again. So a result
//! of two or more rows comes back as a table with a shared metatable and no
//! visible entries, its rows packed in a userdata it holds under a private
//! light-userdata key (so they count against the heap cap, and live exactly
//! as long as the table). The first look inside — indexing, `#`,
//! `pairs`/`ipairs`, `next`, the `raw*` functions, `get/setmetatable`, a
//! template loop — turns it for good into the plain array of row tables
//! Hull returns. The JSON encoder
//! (`res:json`, `json.encode`, the templates' `json` filter) writes a result
//! nobody looked into straight from the packed rows.
#![allow(unsafe_code)]

use std::cell::Cell as StdCell;
use std::ffi::{c_int, c_void};

use cove_db::{DbError, Row, ValueRef};
use mlua::{ffi, Lua, Value};

use super::Lifted;

/// Results this long or longer stay packed; one row is built at once (it is
/// usually read right away, and packing would only add work).
const PACK_FROM: usize = 2;

/// Keys (their addresses): the shared metatable's in the registry, and the
/// userdata's in each packed result. No script can make a light userdata,
/// so no script can read or write the entry (the raw readers unpack first).
static META_KEY: u8 = 1;
static DATA_KEY: u8 = 2;

fn key(k: &'static u8) -> *const c_void {
    (k as *const u8).cast()
}

/// One value: NULL, an integer, a float, or bytes (text and blobs are both
/// Lua strings) at `start..start + bits` of the byte area.
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct Cell {
    pub(super) kind: u32,
    pub(super) start: u32,
    pub(super) bits: u64,
}

pub(super) const NULL: u32 = 0;
pub(super) const INT: u32 = 1;
pub(super) const REAL: u32 = 2;
const BYTES: u32 = 3;

/// How the userdata starts; then `cols` name cells, `rows * cols` value
/// cells and the byte area. Everything is plain data: the block needs no
/// finalizer.
#[repr(C)]
#[derive(Clone, Copy)]
struct Header {
    rows: u32,
    cols: u32,
    bytes: u32,
    _pad: u32,
}

const CELL: usize = std::mem::size_of::<Cell>();
const HEADER: usize = std::mem::size_of::<Header>();

/// A result, read from the scratch collector or from a userdata block.
pub(super) struct Packed<'a> {
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) names: &'a [Cell],
    pub(super) cells: &'a [Cell],
    pub(super) bytes: &'a [u8],
}

impl<'a> Packed<'a> {
    /// # Safety
    /// `block` is a userdata this module wrote, alive for `'a`.
    pub(super) unsafe fn from_block(block: *const u8) -> Packed<'a> {
        let h = std::ptr::read_unaligned(block.cast::<Header>());
        let (rows, cols) = (h.rows as usize, h.cols as usize);
        let names = block.add(HEADER).cast::<Cell>();
        let cells = names.add(cols);
        let bytes = cells.add(rows * cols).cast::<u8>();
        Packed {
            rows,
            cols,
            names: std::slice::from_raw_parts(names, cols),
            cells: std::slice::from_raw_parts(cells, rows * cols),
            bytes: std::slice::from_raw_parts(bytes, h.bytes as usize),
        }
    }

    pub(super) fn text(&self, c: Cell) -> &'a [u8] {
        &self.bytes[c.start as usize..c.start as usize + c.bits as usize]
    }

    pub(super) fn row(&self, r: usize) -> &'a [Cell] {
        &self.cells[r * self.cols..(r + 1) * self.cols]
    }
}

/// The rows of a query as they arrive, before they become Lua values.
#[derive(Default)]
struct Collected {
    rows: usize,
    names: Vec<Cell>,
    cells: Vec<Cell>,
    bytes: Vec<u8>,
}

impl Collected {
    #[inline(always)]
    fn bytes_cell(&mut self, b: &[u8]) -> Result<Cell, DbError> {
        let start = self.bytes.len();
        if start + b.len() > u32::MAX as usize {
            return Err(DbError::Callback("the result is over 4 GiB".into()));
        }
        self.bytes.extend_from_slice(b);
        Ok(Cell {
            kind: BYTES,
            start: start as u32,
            bits: b.len() as u64,
        })
    }

    fn add(&mut self, cols: &[&str], row: &Row<'_>) -> Result<(), DbError> {
        if self.rows == 0 {
            for c in cols {
                let cell = self.bytes_cell(c.as_bytes())?;
                self.names.push(cell);
            }
        }
        self.cells.reserve(cols.len());
        for i in 0..cols.len() {
            let cell = match row.get(i) {
                ValueRef::Null => Cell {
                    kind: NULL,
                    start: 0,
                    bits: 0,
                },
                ValueRef::Integer(x) => Cell {
                    kind: INT,
                    start: 0,
                    bits: x as u64,
                },
                ValueRef::Real(x) => Cell {
                    kind: REAL,
                    start: 0,
                    bits: x.to_bits(),
                },
                ValueRef::Text(b) | ValueRef::Blob(b) => self.bytes_cell(b)?,
            };
            self.cells.push(cell);
        }
        self.rows += 1;
        Ok(())
    }

    fn packed(&self) -> Packed<'_> {
        Packed {
            rows: self.rows,
            cols: self.names.len(),
            names: &self.names,
            cells: &self.cells,
            bytes: &self.bytes,
        }
    }

    fn clear(&mut self) {
        self.rows = 0;
        self.names.clear();
        self.cells.clear();
        self.bytes.clear();
    }
}

thread_local! {
    /// Kept between queries for its capacity (dropped after a large one).
    static SCRATCH: StdCell<Option<Collected>> = const { StdCell::new(None) };
}

/// Run `query(each_row)` and push its rows as Hull returns them: an array
/// of tables keyed by column name, NULL columns absent (packed when long).
/// Nothing is pushed on failure.
pub(crate) fn query<F>(s: &mut Lifted<'_, '_>, query: F) -> Result<(), DbError>
where
    F: FnOnce(&mut dyn FnMut(&[&str], &Row<'_>) -> Result<(), DbError>) -> Result<(), DbError>,
{
    if !s.reserve(3) {
        return Err(DbError::Callback("Lua stack overflow".into()));
    }
    // SAFETY: the cap is lifted (`Lifted`) and 3 slots are free; the
    // result is pushed above the frame's slots.
    unsafe {
        let outcome = query_raw(s.state(), query);
        s.resync();
        outcome
    }
}

/// [`query`] on the raw stack.
///
/// # Safety
/// Call it with the heap cap lifted (`vm::unlimited`, or caps.rs): then the
/// pushes cannot fail on the cap, and a real out-of-memory aborts, so no
/// Lua error unwinds through these frames. Needs 3 free stack slots.
unsafe fn query_raw<F>(state: *mut ffi::lua_State, query: F) -> Result<(), DbError>
where
    F: FnOnce(&mut dyn FnMut(&[&str], &Row<'_>) -> Result<(), DbError>) -> Result<(), DbError>,
{
    let mut got = SCRATCH.with(|s| s.take()).unwrap_or_default();
    got.clear();
    let outcome = query(&mut |cols, row| got.add(cols, row));
    if outcome.is_ok() {
        result(state, &got);
    }
    if got.bytes.capacity() + got.cells.capacity() * CELL <= 1 << 20 {
        SCRATCH.with(|s| s.set(Some(got)));
    }
    outcome
}

/// Push the result table for `got`. Raises only on a memory error.
unsafe fn result(state: *mut ffi::lua_State, got: &Collected) {
    let p = got.packed();
    let packs = p.rows >= PACK_FROM;
    // The array part is made now for `fill`, here or when unpacking.
    ffi::lua_createtable(state, p.rows as c_int, packs as c_int);
    let t = ffi::lua_gettop(state);
    if !packs {
        fill(state, t, &p);
        return;
    }
    let size = HEADER + CELL * (p.cols + p.cells.len()) + p.bytes.len();
    let block = ffi::lua_newuserdatauv(state, size, 0).cast::<u8>();
    let header = Header {
        rows: p.rows as u32,
        cols: p.cols as u32,
        bytes: p.bytes.len() as u32,
        _pad: 0,
    };
    std::ptr::write_unaligned(block.cast::<Header>(), header);
    let names = block.add(HEADER);
    std::ptr::copy_nonoverlapping(p.names.as_ptr().cast::<u8>(), names, CELL * p.cols);
    let cells = names.add(CELL * p.cols);
    std::ptr::copy_nonoverlapping(p.cells.as_ptr().cast::<u8>(), cells, CELL * p.cells.len());
    let bytes = cells.add(CELL * p.cells.len());
    std::ptr::copy_nonoverlapping(p.bytes.as_ptr(), bytes, p.bytes.len());
    // t[DATA] = block; setmetatable(t, META)
    ffi::lua_rawsetp(state, t, key(&DATA_KEY));
    push_meta(state);
    ffi::lua_setmetatable(state, t);
}

/// Push the value of a non-NULL cell.
unsafe fn push_cell(state: *mut ffi::lua_State, p: &Packed<'_>, c: Cell) {
    match c.kind {
        INT => ffi::lua_pushinteger(state, c.bits as i64),
        REAL => ffi::lua_pushnumber(state, f64::from_bits(c.bits)),
        _ => {
            let b = p.text(c);
            ffi::lua_pushlstring(state, b.as_ptr().cast(), b.len());
        }
    }
}

/// Set `t[1..=rows]` (t at absolute index `t`) to the row tables.
/// Raises only on a memory error.
unsafe fn fill(state: *mut ffi::lua_State, t: c_int, p: &Packed<'_>) {
    let base = ffi::lua_gettop(state);
    // The names are pushed once and copied per row, when there is room.
    let names_at = base + 1;
    let kept = ffi::lua_checkstack(state, p.cols as c_int + 4) != 0;
    if kept {
        for &n in p.names {
            push_cell(state, p, n);
        }
    }
    for r in 0..p.rows {
        ffi::lua_createtable(state, 0, p.cols as c_int);
        for (i, &c) in p.row(r).iter().enumerate() {
            if c.kind == NULL {
                continue;
            }
            if kept {
                ffi::lua_pushvalue(state, names_at + i as c_int);
            } else {
                push_cell(state, p, p.names[i]);
            }
            push_cell(state, p, c);
            ffi::lua_rawset(state, -3);
        }
        ffi::lua_rawseti(state, t, r as ffi::lua_Integer + 1);
    }
    ffi::lua_settop(state, base);
}

thread_local! {
    /// The allocator data (one per Lua state), the metatable's address and
    /// its slot in the registry's array part, of the state that installed
    /// last on this thread: a check against them costs no hashed registry
    /// lookup.
    static OURS: StdCell<Ours> = const { StdCell::new(Ours {
        ud: std::ptr::null_mut(),
        meta: std::ptr::null(),
        slot: 0,
    }) };
}

#[derive(Clone, Copy)]
struct Ours {
    ud: *mut c_void,
    meta: *const c_void,
    slot: ffi::lua_Integer,
}

/// `OURS` if `state` is the state it describes.
unsafe fn ours(state: *mut ffi::lua_State) -> Option<Ours> {
    let mut ud = std::ptr::null_mut();
    ffi::lua_getallocf(state, &mut ud);
    Some(OURS.get()).filter(|o| o.ud == ud)
}

/// Push the packed results' metatable.
unsafe fn push_meta(state: *mut ffi::lua_State) {
    match ours(state) {
        Some(o) => ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, o.slot),
        None => ffi::lua_rawgetp(state, ffi::LUA_REGISTRYINDEX, key(&META_KEY)),
    };
}

/// Whether the table at `mt` (a metatable) is the packed results' one.
unsafe fn is_meta(state: *mut ffi::lua_State, mt: c_int) -> bool {
    if let Some(o) = ours(state) {
        return ffi::lua_topointer(state, mt) == o.meta;
    }
    ffi::lua_rawgetp(state, ffi::LUA_REGISTRYINDEX, key(&META_KEY));
    let ours = ffi::lua_rawequal(state, -1, mt) != 0;
    ffi::lua_settop(state, -2);
    ours
}

/// The block of the packed result at absolute index `idx`, if it is one.
/// Needs 3 free stack slots; never raises.
pub(super) unsafe fn packed_at(state: *mut ffi::lua_State, idx: c_int) -> Option<*const u8> {
    match meta_at(state, idx) {
        Meta::Packed(block) => Some(block),
        _ => None,
    }
}

/// What the metatable of the table at absolute index `idx` says of it.
pub(super) enum Meta {
    /// It has none.
    None,
    /// A packed result, with its block.
    Packed(*const u8),
    /// Another one.
    Other,
}

/// [`packed_at`], telling a table with another metatable from one with none.
pub(super) unsafe fn meta_at(state: *mut ffi::lua_State, idx: c_int) -> Meta {
    if ffi::lua_getmetatable(state, idx) == 0 {
        return Meta::None;
    }
    let ours = is_meta(state, ffi::lua_gettop(state));
    ffi::lua_settop(state, -2);
    if !ours {
        return Meta::Other;
    }
    ffi::lua_rawgetp(state, idx, key(&DATA_KEY));
    let block = ffi::lua_touserdata(state, -1);
    ffi::lua_settop(state, -2);
    if block.is_null() {
        Meta::Other
    } else {
        Meta::Packed(block.cast_const().cast())
    }
}

/// Turn the packed result at `idx` (if it is one) into the plain array of
/// rows (a capability's argument, read through the view). The heap cap is
/// lifted only for a packed result.
pub(crate) fn unpack(s: &mut super::Stack<'_>, idx: c_int) {
    let idx = s.abs(idx);
    if !s.reserve(4) {
        return;
    }
    // SAFETY: room made; with the cap lifted nothing raises, and the stack
    // is left as it was (the table stays in its slot).
    unsafe { unpack_uncapped(s.state(), idx) }
}

/// Turn the packed result at absolute index `idx` (if it is one) into the
/// plain array of rows. Raises only on a memory error.
pub(super) unsafe fn unpack_raw(state: *mut ffi::lua_State, idx: c_int) {
    if ffi::lua_type(state, idx) != ffi::LUA_TTABLE || ffi::lua_checkstack(state, 4) == 0 {
        return;
    }
    let Some(block) = packed_at(state, idx) else {
        return;
    };
    // The block stays alive meanwhile: t[DATA] holds it, and t is on the stack.
    fill(state, idx, &Packed::from_block(block));
    ffi::lua_pushnil(state);
    ffi::lua_setmetatable(state, idx);
    // The key stays in the table with a nil value, which `next` skips.
    ffi::lua_pushnil(state);
    ffi::lua_rawsetp(state, idx, key(&DATA_KEY));
}

/// [`unpack`] where a Lua error must not be raised (the template renderer):
/// the heap cap is lifted meanwhile, so only a real out-of-memory, which
/// aborts, could fail. The caller makes room for 3 values.
pub(super) unsafe fn unpack_uncapped(state: *mut ffi::lua_State, idx: c_int) {
    if packed_at(state, idx).is_none() {
        return;
    }
    let lua = Lua::get_or_init_from_ptr(state);
    let Ok(limit) = lua.set_memory_limit(0) else {
        return;
    };
    unpack_raw(state, idx);
    let _ = lua.set_memory_limit(limit);
}

/// `__index`, `__newindex`, `__len`, `__pairs`: unpack, then act raw.
unsafe extern "C-unwind" fn mm_index(state: *mut ffi::lua_State) -> c_int {
    unpack_raw(state, 1);
    ffi::lua_settop(state, 2);
    ffi::lua_rawget(state, 1);
    1
}

unsafe extern "C-unwind" fn mm_newindex(state: *mut ffi::lua_State) -> c_int {
    unpack_raw(state, 1);
    ffi::lua_settop(state, 3);
    ffi::lua_rawset(state, 1);
    0
}

unsafe extern "C-unwind" fn mm_len(state: *mut ffi::lua_State) -> c_int {
    unpack_raw(state, 1);
    ffi::lua_pushinteger(state, ffi::lua_rawlen(state, 1) as ffi::lua_Integer);
    1
}

/// Upvalue 1: Lua's own `next`.
unsafe extern "C-unwind" fn mm_pairs(state: *mut ffi::lua_State) -> c_int {
    unpack_raw(state, 1);
    ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
    ffi::lua_pushvalue(state, 1);
    ffi::lua_pushnil(state);
    3
}

/// A base function that reads tables raw (upvalue 1), made to unpack its
/// first argument first. It runs in this frame, so its errors name the
/// function the script called.
unsafe extern "C-unwind" fn unpack_first(state: *mut ffi::lua_State) -> c_int {
    unpack_raw(state, 1);
    match ffi::lua_tocfunction(state, ffi::lua_upvalueindex(1)) {
        Some(f) => f(state),
        None => 0,
    }
}

/// The base functions that see past metamethods.
const RAW_READERS: [&str; 6] = [
    "next",
    "rawget",
    "rawset",
    "rawlen",
    "getmetatable",
    "setmetatable",
];

/// Register the metatable and wrap the raw readers.
pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let g = lua.globals();
    let mut originals = Vec::new();
    for name in RAW_READERS {
        match g.raw_get::<Value>(name)? {
            f @ Value::Function(_) => originals.push(f),
            _ => {
                return Err(mlua::Error::runtime(format!(
                    "base function {name} missing"
                )))
            }
        }
    }
    // SAFETY: table and closure creation and registry writes raise only on
    // a memory error, inside `exec_raw`'s protected call; the wrapped
    // functions are Lua's own C functions.
    unsafe {
        let args = std::iter::once(Value::Table(g)).chain(originals);
        lua.exec_raw::<()>(mlua::MultiValue::from_iter(args), |state| {
            let g = 1;
            let next = 2;
            ffi::lua_createtable(state, 0, 4);
            ffi::lua_pushcfunction(state, mm_index);
            ffi::lua_setfield(state, -2, c"__index".as_ptr());
            ffi::lua_pushcfunction(state, mm_newindex);
            ffi::lua_setfield(state, -2, c"__newindex".as_ptr());
            ffi::lua_pushcfunction(state, mm_len);
            ffi::lua_setfield(state, -2, c"__len".as_ptr());
            ffi::lua_pushvalue(state, next);
            ffi::lua_pushcclosure(state, mm_pairs, 1);
            ffi::lua_setfield(state, -2, c"__pairs".as_ptr());
            let mut ud = std::ptr::null_mut();
            ffi::lua_getallocf(state, &mut ud);
            let meta = ffi::lua_topointer(state, -1);
            ffi::lua_pushvalue(state, -1);
            let slot = ffi::luaL_ref(state, ffi::LUA_REGISTRYINDEX).into();
            OURS.set(Ours { ud, meta, slot });
            ffi::lua_rawsetp(state, ffi::LUA_REGISTRYINDEX, key(&META_KEY));

            for (i, name) in RAW_READERS.iter().enumerate() {
                ffi::lua_pushvalue(state, next + i as c_int);
                ffi::lua_pushcclosure(state, unpack_first, 1);
                ffi::lua_pushlstring(state, name.as_ptr().cast(), name.len());
                ffi::lua_insert(state, -2);
                ffi::lua_rawset(state, g);
            }
            ffi::lua_settop(state, 0);
        })
    }
}
