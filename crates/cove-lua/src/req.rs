//! `req` tables (Hull §4.1). `body` and `params`, when there are any, are
//! set when the table is made, and `method` and `path` when the request
//! runs middleware; `query`, `headers` (and an empty `params`) and `ctx` are
//! set the first time a script reads them (most handlers read few or none),
//! from the request of the call in progress. A lone handler's `method` and
//! `path` come from there on every read and are not stored: setting them up
//! front cost ~1.2k instructions a request (two keys hashed into a new hash
//! part, and its garbage), and the first key stored on read ~600; with
//! middleware, which reads them again and again, setting them is cheaper.
//! What reads the raw fields ([`fill`]) gets all of them set.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::c_int;

use mlua::{ffi, Lua, LuaString, Table};

use cove_core::{parse_query, Request};

use crate::bind::run_returning;
use crate::vm::unlimited_raw;

thread_local! {
    /// The lazy parts of the request of the script call in progress on this
    /// worker thread, and how many calls are lent one (a call that runs
    /// another, as a test's request does, lends it on top). Swapped in and
    /// out field by field: building and dropping a whole `Request` around
    /// every call cost ~300 instructions.
    static CURRENT: RefCell<(u32, Request)> = RefCell::new((0, Request::default()));
}

/// Lend the lazy parts of `req` to the call about to run; [`end`] returns them.
pub(crate) fn begin(req: &mut Request) {
    CURRENT.with(|c| {
        let (depth, lent) = &mut *c.borrow_mut();
        *depth += 1;
        swap_lazy(req, lent);
    });
}

/// Give the parts lent by [`begin`] back to `req`.
pub(crate) fn end(req: &mut Request) {
    CURRENT.with(|c| {
        let (depth, lent) = &mut *c.borrow_mut();
        if *depth > 0 {
            *depth -= 1;
            swap_lazy(req, lent);
        }
    });
}

fn swap_lazy(a: &mut Request, b: &mut Request) {
    std::mem::swap(&mut a.method, &mut b.method);
    std::mem::swap(&mut a.path, &mut b.path);
    std::mem::swap(&mut a.query, &mut b.query);
    std::mem::swap(&mut a.params, &mut b.params);
    std::mem::swap(&mut a.headers, &mut b.headers);
}

/// `method` and `path` of the call in progress as raw parts (they stay
/// where they are until [`end`]), for pushing without a borrow held.
pub(crate) fn method_path() -> Option<[(*const u8, usize); 2]> {
    CURRENT.with(|c| {
        let (depth, req) = &*c.borrow();
        (*depth > 0).then(|| {
            [
                (req.method.as_ptr(), req.method.len()),
                (req.path.as_ptr(), req.path.len()),
            ]
        })
    })
}

/// The body as a Lua string, if the request has one (and it was read).
pub(crate) fn body(lua: &Lua, req: &Request) -> mlua::Result<Option<LuaString>> {
    req.body
        .as_ref()
        .map(|b| lua.create_string(&b[..]))
        .transpose()
}

/// `req_meta.__index`: the fields of a `req` table built on first read, then
/// stored in it. `ctx` is a new table; `query`, `params` and `headers` come
/// from the request of the call in progress, and only for that request's
/// own table (`current[1]`). A C function: a Lua one that called back into
/// Rust through mlua cost ~1.8k instructions more per field read.
unsafe extern "C-unwind" fn req_index(state: *mut ffi::lua_State) -> c_int {
    run_returning(state, || {
        let Some(field) = key_at(state, 2).and_then(Field::of) else {
            return Ok(0);
        };
        let name = || String::from_utf8_lossy(key_at(state, 2).unwrap_or_default());
        let ctx = matches!(field, Field::Ctx);
        if !ctx && !is_current_upvalue(state) {
            return Err(format!("req.{} read outside its own request", name()));
        }
        CURRENT.with(|c| {
            let (depth, req) = &*c.borrow();
            if *depth == 0 && !ctx {
                return Err(format!(
                    "req.{} read after its request ended; copy what you need while handling it",
                    name()
                ));
            }
            unlimited_raw(state, |_| {
                push_field(state, field, req);
                // A table is stored, so that changes to it last: t[k] = the
                // value, which stays on top as the result. A string is not
                // (the first key stored costs the table a hash part, ~600
                // instructions): it is pushed again on every read.
                if !matches!(field, Field::Method | Field::Path) {
                    ffi::lua_pushvalue(state, 2);
                    ffi::lua_pushvalue(state, -2);
                    ffi::lua_rawset(state, 1);
                }
                Ok(1)
            })?
        })
    })
}

/// `req_meta.__pairs`'s first step, `fill(t)`: see [`fill`].
unsafe extern "C-unwind" fn req_fill(state: *mut ffi::lua_State) -> c_int {
    run_returning(state, || {
        fill(state, 1);
        Ok(0)
    })
}

/// Set the fields built on first read that the req table at `idx` lacks,
/// for what reads its raw fields (`pairs`, the JSON encoder), so that they
/// see what Hull's plain table has. Only the current request's table gets
/// them (one kept past its request keeps what it has), and not `ctx`.
/// Over the heap cap the fields stay set; the next allocation under the cap
/// fails instead.
pub(crate) unsafe fn fill(state: *mut ffi::lua_State, idx: c_int) {
    let idx = ffi::lua_absindex(state, idx);
    if !is_current(state, idx) {
        return;
    }
    let _ = unlimited_raw(state, |_| {
        CURRENT.with(|c| {
            let (depth, req) = &*c.borrow();
            if *depth == 0 {
                return;
            }
            for (name, field) in FIELDS {
                push_str(state, name);
                if ffi::lua_rawget(state, idx) == ffi::LUA_TNIL {
                    ffi::lua_pop(state, 1);
                    push_str(state, name);
                    push_field(state, field, req);
                    ffi::lua_rawset(state, idx);
                } else {
                    ffi::lua_pop(state, 1);
                }
            }
        });
        Ok(0)
    });
}

/// [`fill`] the req table of the call in progress (`current[1]`), if any.
pub(crate) fn fill_current(lua: &Lua, current: &Table) {
    if let Ok(Some(t)) = current.raw_get::<Option<Table>>(1) {
        // SAFETY: `exec_raw` pushed the table; `fill` raises nothing.
        let _ = unsafe { lua.exec_raw::<()>(&t, |state| fill(state, -1)) };
    }
}

/// [`fill`] the value at `idx` if it is a req table; whether it is one.
pub(crate) unsafe fn fill_if_req(state: *mut ffi::lua_State, idx: c_int) -> bool {
    let req = ffi::lua_type(state, idx) == ffi::LUA_TTABLE && is_req(state, idx);
    if req {
        fill(state, idx);
    }
    req
}

/// Whether the value at `idx` is a req table: its metatable holds the
/// prelude's `current` under [`CURRENT_KEY`].
pub(crate) unsafe fn is_req(state: *mut ffi::lua_State, idx: c_int) -> bool {
    if ffi::lua_getmetatable(state, idx) == 0 {
        return false;
    }
    let ours = ffi::lua_rawgetp(state, -1, key()) == ffi::LUA_TTABLE;
    ffi::lua_pop(state, 2);
    ours
}

/// Whether the table indexed (argument 1 of [`req_index`]) is the current
/// request's: `current[1]`, the closure's upvalue. Faster than
/// [`is_current`], which finds `current` in the metatable.
unsafe fn is_current_upvalue(state: *mut ffi::lua_State) -> bool {
    ffi::lua_rawgeti(state, ffi::lua_upvalueindex(1), 1);
    let same = ffi::lua_topointer(state, 1) == ffi::lua_topointer(state, -1);
    ffi::lua_pop(state, 1);
    same
}

/// Whether the table at `idx` is the current request's (`current[1]`).
unsafe fn is_current(state: *mut ffi::lua_State, idx: c_int) -> bool {
    if ffi::lua_getmetatable(state, idx) == 0 {
        return false;
    }
    if ffi::lua_rawgetp(state, -1, key()) != ffi::LUA_TTABLE {
        ffi::lua_pop(state, 2);
        return false;
    }
    ffi::lua_rawgeti(state, -1, 1);
    let same = ffi::lua_rawequal(state, idx, -1) != 0;
    ffi::lua_pop(state, 3);
    same
}

/// The key (its address) under which the metatable of req tables holds
/// the prelude's `current`: a light userdata, which no script can make.
static CURRENT_KEY: u8 = 0;

fn key() -> *const std::ffi::c_void {
    (&CURRENT_KEY as *const u8).cast()
}

/// Add `req_fill` to the prelude's `raw` table.
pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    // SAFETY: it reads its argument from the stack and raises only when no
    // Rust value is live.
    unsafe { raw.raw_set("req_fill", lua.create_c_function(req_fill)?) }
}

/// Complete the prelude's metatable of req tables: `__index`, a closure
/// over the prelude's `current`, and `current` itself, where
/// [`is_current`] and [`is_req`] find it.
pub(crate) fn set_meta(lua: &Lua, meta: &Table, current: &Table) -> mlua::Result<()> {
    // SAFETY: the stack holds `meta`, `current` as `exec_raw` pushed them;
    // each set pops what was pushed for it, and raises only on a memory
    // error, inside `exec_raw`'s protected call.
    unsafe {
        lua.exec_raw::<()>((meta, current), |state| {
            ffi::lua_pushvalue(state, -1);
            ffi::lua_pushcclosure(state, req_index, 1);
            ffi::lua_setfield(state, -3, c"__index".as_ptr());
            ffi::lua_rawsetp(state, -2, key());
            ffi::lua_pop(state, 1);
        })
    }
}

#[derive(Clone, Copy)]
enum Field {
    Ctx,
    Method,
    Path,
    Query,
    Params,
    Headers,
}

/// The fields [`fill`] sets.
const FIELDS: [(&str, Field); 5] = [
    ("method", Field::Method),
    ("path", Field::Path),
    ("query", Field::Query),
    ("params", Field::Params),
    ("headers", Field::Headers),
];

impl Field {
    fn of(key: &[u8]) -> Option<Field> {
        if key == b"ctx" {
            return Some(Field::Ctx);
        }
        FIELDS
            .iter()
            .find(|(name, _)| name.as_bytes() == key)
            .map(|&(_, f)| f)
    }
}

/// The string at `idx`, if it is one (not a number converted in place).
unsafe fn key_at<'a>(state: *mut ffi::lua_State, idx: c_int) -> Option<&'a [u8]> {
    if ffi::lua_type(state, idx) != ffi::LUA_TSTRING {
        return None;
    }
    let mut len = 0;
    let p = ffi::lua_tolstring(state, idx, &mut len);
    Some(std::slice::from_raw_parts(p.cast(), len))
}

/// Push `field`'s value. Runs with the heap cap lifted: nothing here raises.
/// Duplicate headers are joined (`, `; `; ` for cookies); the last duplicate
/// query key wins.
unsafe fn push_field(state: *mut ffi::lua_State, field: Field, req: &Request) {
    match field {
        Field::Ctx => ffi::lua_createtable(state, 0, 0),
        Field::Method => push_str(state, &req.method),
        Field::Path => push_str(state, &req.path),
        Field::Query => {
            let pairs = req.query.as_deref().map(parse_query).unwrap_or_default();
            push_pairs(state, pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        Field::Params => {
            push_pairs(state, req.params.iter().map(|(k, v)| (&**k, v.as_str())));
        }
        Field::Headers => {
            let joined = req.joined_headers();
            push_pairs(state, joined.iter().map(|(k, v)| (*k, &**v)));
        }
    }
}

unsafe fn push_str(state: *mut ffi::lua_State, s: &str) {
    ffi::lua_pushlstring(state, s.as_ptr().cast(), s.len());
}

/// A new table of string pairs, set in order (a later key wins).
unsafe fn push_pairs<'a>(
    state: *mut ffi::lua_State,
    pairs: impl ExactSizeIterator<Item = (&'a str, &'a str)>,
) {
    ffi::lua_createtable(state, 0, pairs.len() as c_int);
    for (k, v) in pairs {
        push_str(state, k);
        push_str(state, v);
        ffi::lua_rawset(state, -3);
    }
}
