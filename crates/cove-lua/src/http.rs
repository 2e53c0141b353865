//! The `http` global (Hull §6.7): every function of cove-caps' http table
//! with a Lua name, converting arguments and results only. Each is a slow
//! function (suspend.rs): the request is checked here, sent off the
//! worker's thread once the handler can suspend.

use mlua::{Lua, MultiValue, Table, Value};

use cove_caps::http::{HttpError, HttpFn, Response, FUNCTIONS};
use cove_core::{Job, JobOutput};

use crate::app_api::AppState;
use crate::suspend::{output, slow_function, Start};

/// The manifest's hosts (empty: not configured, or `cove test`).
pub(crate) fn hosts(lua: &Lua) -> Vec<String> {
    lua.app_data_ref::<AppState>()
        .map(|s| s.registry.hosts().to_vec())
        .unwrap_or_default()
}

fn arg(args: &MultiValue, i: usize) -> &Value {
    args.get(i).unwrap_or(&Value::Nil)
}

fn text(f: &HttpFn, what: &str, v: &Value) -> mlua::Result<String> {
    match v {
        Value::String(s) => Ok(s.to_str()?.to_string()),
        other => Err(mlua::Error::runtime(format!(
            "{}: {what} must be a string, got {}",
            f.failed,
            other.type_name()
        ))),
    }
}

fn bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        _ => None,
    }
}

/// `opts.headers` as name/value pairs; number values are written out.
fn headers(f: &HttpFn, opts: Option<&Table>) -> mlua::Result<Vec<(String, String)>> {
    let Some(Value::Table(t)) = opts.map(|o| o.raw_get::<Value>("headers")).transpose()? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let value = match &v {
            Value::Integer(_) | Value::Number(_) => v.to_string()?,
            other => text(f, "a header value", other)?,
        };
        out.push((text(f, "a header name", &k)?, value));
    }
    Ok(out)
}

/// Read the arguments where the function's shape puts them.
fn request_of(f: &HttpFn, args: &MultiValue) -> mlua::Result<cove_caps::http::Request> {
    let at = f.shape.positions();
    let method = at
        .method
        .map(|i| text(f, "the method", arg(args, i)))
        .transpose()?;
    let url = text(f, "the URL", arg(args, at.url))?;
    let opts = match arg(args, at.opts) {
        Value::Table(t) => Some(t),
        _ => None,
    };
    let body = match (at.body, opts) {
        (Some(i), _) => bytes(arg(args, i)),
        (None, Some(o)) => bytes(&o.raw_get::<Value>("body")?),
        (None, None) => None,
    };
    Ok(f.request(method, url, body, headers(f, opts)?))
}

fn to_lua(lua: &Lua, res: Response) -> mlua::Result<MultiValue> {
    let t = lua.create_table_with_capacity(0, 3)?;
    t.raw_set("status", res.status)?;
    t.raw_set("body", lua.create_string(&res.body)?)?;
    let h = lua.create_table_with_capacity(0, res.headers.len())?;
    for (name, value) in res.headers {
        h.raw_set(name, value)?;
    }
    t.raw_set("headers", h)?;
    Ok(MultiValue::from_iter([Value::Table(t)]))
}

fn finish(lua: &Lua, out: JobOutput) -> mlua::Result<Result<MultiValue, String>> {
    match output::<Result<Response, HttpError>>(out) {
        Ok(Ok(res)) => to_lua(lua, res).map(Ok),
        Ok(Err(e)) => Ok(Err(e.message)),
        Err(msg) => Ok(Err(msg)),
    }
}

pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    for f in FUNCTIONS {
        let Some(name) = f.lua else { continue };
        let func = slow_function(lua, move |lua, args| {
            let req = request_of(f, &args)?;
            let prepared = f
                .prepare(&hosts(lua), req)
                .map_err(|e| mlua::Error::runtime(e.message))?;
            Ok(Start::Job(Job::new(move || prepared.send()), finish))
        })?;
        t.raw_set(name, func)?;
    }
    lua.globals().raw_set("http", t)
}
