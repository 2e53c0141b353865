//! `req` tables (Hull §4.1). `method`, `path`, `body` and `ctx` are set when
//! the table is made; `query`, `params` and `headers` are built the first
//! time a script reads them (most handlers read few or none), from the
//! request of the call in progress.

use std::cell::RefCell;

use mlua::{Lua, LuaString, Table, Value};

use cove_core::{parse_query, Request};

use crate::globals::{fail, Outcome};
use crate::vm::unlimited;

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
    std::mem::swap(&mut a.query, &mut b.query);
    std::mem::swap(&mut a.params, &mut b.params);
    std::mem::swap(&mut a.headers, &mut b.headers);
}

/// The body as a Lua string, if the request has one (and it was read).
pub(crate) fn body(lua: &Lua, req: &Request) -> mlua::Result<Option<LuaString>> {
    req.body
        .as_ref()
        .map(|b| lua.create_string(&b[..]))
        .transpose()
}

/// `lazy(name)`: the `query`, `params` or `headers` table of the request in
/// progress. Duplicate headers are joined (`, `; `; ` for cookies); the last
/// duplicate query key wins.
pub(crate) fn lazy_fn(lua: &Lua) -> mlua::Result<mlua::Function> {
    lua.create_function(|lua, name: String| {
        let built = CURRENT.with(|c| {
            let current = c.borrow();
            let (depth, req) = &*current;
            if *depth == 0 {
                return Ok(None);
            }
            unlimited(lua, || match name.as_str() {
                "query" => query(lua, req.query.as_deref()),
                "params" => pairs(lua, &req.params),
                _ => headers(lua, req),
            })
            .map(Some)
        })?;
        match built {
            Some(t) => Ok::<Outcome, _>((true, Value::Table(t))),
            None => fail(
                lua,
                format!(
                    "req.{name} read after its request ended; copy what you need while handling it"
                ),
            ),
        }
    })
}

fn query(lua: &Lua, raw: Option<&str>) -> mlua::Result<Table> {
    let pairs = raw.map(parse_query).unwrap_or_default();
    let t = lua.create_table_with_capacity(0, pairs.len())?;
    for (k, v) in pairs {
        t.raw_set(k, v)?;
    }
    Ok(t)
}

fn pairs(lua: &Lua, pairs: &[(String, String)]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, pairs.len())?;
    for (k, v) in pairs {
        t.raw_set(k.as_str(), v.as_str())?;
    }
    Ok(t)
}

fn headers(lua: &Lua, req: &Request) -> mlua::Result<Table> {
    let joined = req.joined_headers();
    let t = lua.create_table_with_capacity(0, joined.len())?;
    for (name, value) in joined {
        t.raw_set(name, &*value)?;
    }
    Ok(t)
}
