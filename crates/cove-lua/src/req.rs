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

use std::cell::RefCell;
use std::ffi::c_int;

use mlua::{ffi, Lua, LuaString, Table};

use cove_core::{parse_query, Request};

use crate::raw::{self, upvalue, CFn, Lifted, Stack};

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

/// `f(method, path)` of the call in progress, if there is one.
pub(crate) fn with_method_path(f: impl FnOnce(&str, &str)) {
    CURRENT.with(|c| {
        let (depth, req) = &*c.borrow();
        if *depth > 0 {
            f(&req.method, &req.path);
        }
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
struct ReqIndex;
impl CFn for ReqIndex {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        let Some(key) = s.arg_str(2) else {
            return Ok(0);
        };
        let Some(field) = Field::of(key) else {
            return Ok(0);
        };
        let name = || String::from_utf8_lossy(key);
        let ctx = matches!(field, Field::Ctx);
        if !ctx && !is_current_upvalue(s) {
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
            s.lifted(|s| {
                push_field(s, field, req);
                // A table is stored, so that changes to it last: t[k] = the
                // value, which stays on top as the result. A string is not
                // (the first key stored costs the table a hash part, ~600
                // instructions): it is pushed again on every read.
                if !matches!(field, Field::Method | Field::Path) {
                    s.push_value(2);
                    s.push_value(-2);
                    s.raw_set(1);
                }
            })?;
            Ok(1)
        })
    }
}

/// `req_meta.__pairs`'s first step, `fill(t)`: see [`fill`].
struct ReqFill;
impl CFn for ReqFill {
    fn call(s: &mut Stack<'_>) -> Result<c_int, String> {
        if s.is_table(1) {
            fill(s, 1);
        }
        Ok(0)
    }
}

/// Set the fields built on first read that the req table at `idx` lacks,
/// for what reads its raw fields (`pairs`, the JSON encoder), so that they
/// see what Hull's plain table has. Only the current request's table gets
/// them (one kept past its request keeps what it has), and not `ctx`.
/// Over the heap cap the fields stay set; the next allocation under the cap
/// fails instead.
pub(crate) fn fill(s: &mut Stack<'_>, idx: c_int) {
    let idx = s.abs(idx);
    if !is_current(s, idx) {
        return;
    }
    let _ = s.lifted(|s| {
        CURRENT.with(|c| {
            let (depth, req) = &*c.borrow();
            if *depth == 0 {
                return;
            }
            for (name, field) in FIELDS {
                s.push_bytes(name.as_bytes());
                if s.raw_get(idx) == ffi::LUA_TNIL {
                    s.pop(1);
                    s.push_bytes(name.as_bytes());
                    push_field(s, field, req);
                    s.raw_set(idx);
                } else {
                    s.pop(1);
                }
            }
        })
    });
}

/// [`fill`] the req table of the call in progress (`current[1]`), if any.
pub(crate) fn fill_current(lua: &Lua, current: &Table) {
    if let Ok(Some(t)) = current.raw_get::<Option<Table>>(1) {
        let _ = raw::exec::<()>(lua, &t, |s| fill(s, 1));
    }
}

/// [`fill`] the value at `idx` if it is a req table; whether it is one.
pub(crate) fn fill_if_req(s: &mut Stack<'_>, idx: c_int) -> bool {
    let req = s.is_table(idx) && is_req(s, idx);
    if req {
        fill(s, idx);
    }
    req
}

/// Whether the value at `idx` is a req table: its metatable holds the
/// prelude's `current` under [`CURRENT_KEY`].
fn is_req(s: &mut Stack<'_>, idx: c_int) -> bool {
    if !s.get_metatable(idx) {
        return false;
    }
    let ours = s.raw_getp(-1, key()) == ffi::LUA_TTABLE;
    s.pop(2);
    ours
}

/// Whether the table indexed (argument 1 of [`ReqIndex`]) is the current
/// request's: `current[1]`, the closure's upvalue. Faster than
/// [`is_current`], which finds `current` in the metatable.
fn is_current_upvalue(s: &mut Stack<'_>) -> bool {
    s.raw_geti(upvalue(1), 1);
    let same = s.to_pointer(1) == s.to_pointer(-1);
    s.pop(1);
    same
}

/// Whether the table at `idx` is the current request's (`current[1]`).
fn is_current(s: &mut Stack<'_>, idx: c_int) -> bool {
    if !s.get_metatable(idx) {
        return false;
    }
    if s.raw_getp(-1, key()) != ffi::LUA_TTABLE {
        s.pop(2);
        return false;
    }
    s.raw_geti(-1, 1);
    let same = s.raw_equal(idx, -1);
    s.pop(3);
    same
}

/// The key (its address) under which the metatable of req tables holds
/// the prelude's `current`: a light userdata, which no script can make.
static CURRENT_KEY: u8 = 0;

fn key() -> &'static u8 {
    &CURRENT_KEY
}

/// Add `req_fill` to the prelude's `raw` table.
pub(crate) fn add_raw(lua: &Lua, raw: &Table) -> mlua::Result<()> {
    raw.raw_set("req_fill", raw::function::<ReqFill>(lua)?)
}

/// Complete the prelude's metatable of req tables: `__index`, a closure
/// over the prelude's `current`, and `current` itself, where
/// [`is_current`] and [`is_req`] find it.
pub(crate) fn set_meta(lua: &Lua, meta: &Table, current: &Table) -> mlua::Result<()> {
    raw::exec(lua, (meta, current), |s| {
        s.push_value(2);
        s.push_closure::<ReqIndex>(1);
        s.set_field(1, "__index");
        s.push_value(2);
        s.raw_setp(1, key());
    })
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

/// Push `field`'s value. Runs with the heap cap lifted: nothing here raises.
/// Duplicate headers are joined (`, `; `; ` for cookies); the last duplicate
/// query key wins.
fn push_field(s: &mut Lifted<'_, '_>, field: Field, req: &Request) {
    match field {
        Field::Ctx => s.new_table(0, 0),
        Field::Method => s.push_bytes(req.method.as_bytes()),
        Field::Path => s.push_bytes(req.path.as_bytes()),
        Field::Query => {
            let pairs = req.query.as_deref().map(parse_query).unwrap_or_default();
            push_pairs(s, pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        }
        Field::Params => {
            push_pairs(s, req.params.iter().map(|(k, v)| (&**k, v.as_str())));
        }
        Field::Headers => {
            let joined = req.joined_headers();
            push_pairs(s, joined.iter().map(|(k, v)| (*k, &**v)));
        }
    }
}

/// A new table of string pairs, set in order (a later key wins).
fn push_pairs<'a>(
    s: &mut Lifted<'_, '_>,
    pairs: impl ExactSizeIterator<Item = (&'a str, &'a str)>,
) {
    s.new_table(0, pairs.len());
    let t = s.top();
    for (k, v) in pairs {
        s.set_bytes(t, k.as_bytes(), v.as_bytes());
    }
}
