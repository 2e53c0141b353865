//! `req` tables and the `res` object (Hull §4).

use mlua::{AnyUserData, Lua, Table, UserData, UserDataMethods, Value};

use cove_caps::Csp;
use cove_core::{parse_query, Request, Response};

use crate::json;

/// Build the `req` table. Duplicate headers are joined (`, `; `; ` for
/// cookies); the last duplicate query key wins.
pub(crate) fn build(lua: &Lua, req: &Request) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(0, 8)?;
    t.raw_set("method", req.method.as_str())?;
    t.raw_set("path", req.path.as_str())?;
    let query = lua.create_table()?;
    if let Some(raw) = &req.query {
        for (k, v) in parse_query(raw) {
            query.raw_set(k, v)?;
        }
    }
    t.raw_set("query", query)?;
    let params = lua.create_table_with_capacity(0, req.params.len())?;
    for (k, v) in &req.params {
        params.raw_set(k.as_str(), v.as_str())?;
    }
    t.raw_set("params", params)?;
    let headers = lua.create_table_with_capacity(0, req.headers.len())?;
    for (i, (name, value)) in req.headers.iter().enumerate() {
        if req.headers[..i].iter().any(|(n, _)| n == name) {
            let prev: mlua::LuaString = headers.raw_get(name.as_str())?;
            let sep = if name == "cookie" { "; " } else { ", " };
            let joined = [&prev.as_bytes()[..], sep.as_bytes(), value.as_bytes()].concat();
            headers.raw_set(name.as_str(), lua.create_string(joined)?)?;
        } else {
            headers.raw_set(name.as_str(), value.as_str())?;
        }
    }
    t.raw_set("headers", headers)?;
    set_body(lua, &t, req)?;
    t.raw_set("ctx", lua.create_table()?)?;
    Ok(t)
}

pub(crate) fn set_body(lua: &Lua, t: &Table, req: &Request) -> mlua::Result<()> {
    if let Some(body) = &req.body {
        t.raw_set("body", lua.create_string(&body[..])?)?;
    }
    Ok(())
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
            |_, (ud, data, code): (AnyUserData, Value, Option<Value>)| {
                let code = code.map(|c| status_code("json", &c)).transpose()?;
                let body = json::encode(&data).map_err(|e| res_err("json", e))?;
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
