//! `req` tables and the `res` object (Hull §4).

use mlua::{AnyUserData, Lua, LuaString, Table, UserData, UserDataMethods, Value};

use cove_caps::Csp;
use cove_core::{parse_query, Request, Response};

use crate::json;
use crate::vm::unlimited;

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

/// The `res` object. One per worker; it holds the response of the call in
/// progress and is empty between calls.
pub(crate) struct ResObj(pub(crate) Option<Response>);

fn res_err(api: &str, e: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::RuntimeError(format!("res:{api}: {e}"))
}

fn with_res<R>(
    ud: &AnyUserData,
    api: &str,
    f: impl FnOnce(&mut Response) -> Result<R, cove_core::ResponseError>,
) -> mlua::Result<R> {
    let mut obj = ud.borrow_mut::<ResObj>()?;
    let res = obj.0.as_mut().ok_or_else(|| {
        res_err(
            api,
            "this response was already sent; use res only inside its own handler",
        )
    })?;
    f(res).map_err(|e| res_err(api, e))
}

fn status_code(api: &str, v: &Value) -> mlua::Result<i64> {
    match v {
        Value::Integer(i) => Ok(*i),
        Value::Number(n) if n.fract() == 0.0 => Ok(*n as i64),
        Value::String(s) => s
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| {
                res_err(
                    api,
                    format!("status must be an integer, got {:?}", s.to_string_lossy()),
                )
            }),
        other => Err(res_err(
            api,
            format!("status must be an integer, got {}", other.type_name()),
        )),
    }
}

fn body_bytes(v: Option<mlua::LuaString>) -> bytes::Bytes {
    v.map(|s| bytes::Bytes::copy_from_slice(&s.as_bytes()))
        .unwrap_or_default()
}

impl UserData for ResObj {
    fn add_methods<M: UserDataMethods<Self>>(m: &mut M) {
        m.add_function("status", |_, (ud, code): (AnyUserData, Value)| {
            let code = status_code("status", &code)?;
            with_res(&ud, "status", |r| r.set_status(code))?;
            Ok(ud)
        });
        m.add_function(
            "header",
            |_, (ud, name, value): (AnyUserData, mlua::LuaString, mlua::LuaString)| {
                let (name, value) = (name.to_str()?.to_string(), value.to_str()?.to_string());
                with_res(&ud, "header", |r| r.add_header(&name, &value))?;
                Ok(ud)
            },
        );
        m.add_function(
            "json",
            |lua, (ud, data, code): (AnyUserData, Value, Option<Value>)| {
                let code = code.map(|c| status_code("json", &c)).transpose()?;
                let body = unlimited(lua, || Ok(json::encode(lua, &data)))?
                    .map_err(|e| res_err("json", e))?;
                with_res(&ud, "json", |r| {
                    if let Some(c) = code {
                        r.set_status(c)?;
                    }
                    r.json(body);
                    Ok(())
                })
            },
        );
        m.add_function(
            "text",
            |_, (ud, body): (AnyUserData, Option<mlua::LuaString>)| {
                let body = body_bytes(body);
                with_res(&ud, "text", |r| {
                    r.text(body);
                    Ok(())
                })
            },
        );
        m.add_function(
            "html",
            |lua, (ud, body): (AnyUserData, Option<mlua::LuaString>)| {
                let body = body_bytes(body);
                let csp = lua
                    .app_data_ref::<Csp>()
                    .map(|c| c.clone())
                    .unwrap_or_default();
                with_res(&ud, "html", |r| {
                    r.html(body, csp.header());
                    Ok(())
                })
            },
        );
        m.add_function(
            "redirect",
            |_, (ud, url, code): (AnyUserData, mlua::LuaString, Option<Value>)| {
                let code = code.map(|c| status_code("redirect", &c)).transpose()?;
                let url = url.to_str()?.to_string();
                with_res(&ud, "redirect", |r| r.redirect(&url, code))
            },
        );
    }
}
