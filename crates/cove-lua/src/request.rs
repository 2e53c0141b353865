//! `req` tables and the `res` object (Hull §4).

use mlua::{Lua, LuaString, Table};

use cove_core::{parse_query, Request};

/// What the prelude's dispatcher needs to build a `req` table: the query,
/// params and headers tables (`None` when empty; Lua fills in `{}`).
pub(crate) struct ReqParts {
    pub(crate) method: LuaString,
    pub(crate) path: LuaString,
    pub(crate) body: Option<LuaString>,
    pub(crate) query: Option<Table>,
    pub(crate) params: Option<Table>,
    pub(crate) headers: Option<Table>,
}

/// Build the parts of `req`. Duplicate headers are joined (`, `; `; ` for
/// cookies); the last duplicate query key wins.
pub(crate) fn parts(lua: &Lua, req: &Request) -> mlua::Result<ReqParts> {
    let query = match req.query.as_deref().map(parse_query) {
        Some(pairs) if !pairs.is_empty() => {
            let t = lua.create_table_with_capacity(0, pairs.len())?;
            for (k, v) in pairs {
                t.raw_set(k, v)?;
            }
            Some(t)
        }
        _ => None,
    };
    let params = if req.params.is_empty() {
        None
    } else {
        let t = lua.create_table_with_capacity(0, req.params.len())?;
        for (k, v) in &req.params {
            t.raw_set(k.as_str(), v.as_str())?;
        }
        Some(t)
    };
    let headers = if req.headers.is_empty() {
        None
    } else {
        let t = lua.create_table_with_capacity(0, req.headers.len())?;
        for (i, (name, value)) in req.headers.iter().enumerate() {
            if req.headers[..i].iter().any(|(n, _)| n == name) {
                let prev: LuaString = t.raw_get(name.as_str())?;
                let sep = if name == "cookie" { "; " } else { ", " };
                let joined = [&prev.as_bytes()[..], sep.as_bytes(), value.as_bytes()].concat();
                t.raw_set(name.as_str(), lua.create_string(joined)?)?;
            } else {
                t.raw_set(name.as_str(), value.as_str())?;
            }
        }
        Some(t)
    };
    Ok(ReqParts {
        method: lua.create_string(&req.method)?,
        path: lua.create_string(&req.path)?,
        body: body(lua, req)?,
        query,
        params,
        headers,
    })
}

/// The body as a Lua string, if the request has one (and it was read).
pub(crate) fn body(lua: &Lua, req: &Request) -> mlua::Result<Option<LuaString>> {
    req.body
        .as_ref()
        .map(|b| lua.create_string(&b[..]))
        .transpose()
}
