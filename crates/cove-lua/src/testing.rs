//! `cove test` for Lua apps: the `test` global of Hull §9.2, converting
//! values to and from cove-caps' testkit, which does the work.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use mlua::{Function, Lua, MetaMethod, Table, Value, Variadic};

use cove_caps::testkit::{self, Shown, Suite, TestCall, Trail};
use cove_core::AppFiles;
use serde_json::Value as Json;

use crate::error::describe;
use crate::{json, LuaApp};

type Cases = Rc<RefCell<Vec<(String, Function)>>>;

/// Run every test file against `app`, which stays loaded (with its
/// database) across files, as in Hull.
pub fn run_suite(app: LuaApp, files: &AppFiles, test_files: &[String], suite: &mut Suite) {
    let app = Rc::new(app);
    let lua = app.engine.lua.clone();
    // A test may keep a `req` to look at it after its request.
    app.engine.fill_req.set(true);
    // Hull: http and smtp are never configured in tests.
    if let Some(mut st) = lua.app_data_mut::<crate::app_api::AppState>() {
        st.registry.disable_outbound();
    }
    let cases: Cases = Rc::default();
    let trail = suite.trail.clone();
    if let Err(e) = install(&lua, Rc::downgrade(&app), cases.clone(), trail) {
        suite.load_error(&describe(&e));
        return;
    }
    for file in test_files {
        suite.file(file);
        cases.borrow_mut().clear();
        let source = match files.read(file) {
            Ok(s) => s.into_owned(),
            Err(e) => {
                suite.load_error(&format!("{file}: {e}"));
                continue;
            }
        };
        let loaded = app
            .engine
            .budget
            .run(|| lua.load(source).set_name(format!("@{file}")).exec());
        if let Err(e) = loaded {
            suite.load_error(&describe(&e));
            continue;
        }
        suite.trail.clear();
        let registered = std::mem::take(&mut *cases.borrow_mut());
        for (name, case) in registered {
            suite.timed(&name, || {
                app.engine
                    .budget
                    .run(|| case.call::<()>(()).map_err(|e| describe(&e)))
            });
        }
    }
}

fn install(lua: &Lua, app: Weak<LuaApp>, cases: Cases, trail: Trail) -> mlua::Result<()> {
    let test = lua.create_table()?;
    for method in ["get", "post", "put", "patch", "delete"] {
        let app = app.clone();
        let trail = trail.clone();
        let f = lua.create_function(move |lua, (path, opts): (String, Option<Table>)| {
            let app = app
                .upgrade()
                .ok_or_else(|| mlua::Error::runtime("test: the app is gone"))?;
            let call = call_of(method, path, opts.as_ref())?;
            reply_table(lua, trail.dispatch(&app.routes, &app.engine, call))
        })?;
        test.raw_set(method, f)?;
    }
    test.raw_set("eq", lua.create_function(eq)?)?;
    test.raw_set(
        "ok",
        lua.create_function(|_, (v, msg): (Value, Option<String>)| {
            if matches!(v, Value::Nil | Value::Boolean(false)) {
                return Err(mlua::Error::runtime(
                    msg.unwrap_or_else(|| "test.ok failed".into()),
                ));
            }
            Ok(())
        })?,
    )?;
    test.raw_set("err", lua.create_function(expect_error)?)?;
    let meta = lua.create_table()?;
    meta.raw_set(
        MetaMethod::Call.name(),
        lua.create_function(move |_, (_, name, f): (Table, String, Function)| {
            cases.borrow_mut().push((name, f));
            Ok(())
        })?,
    )?;
    test.set_metatable(Some(meta))?;
    lua.globals().raw_set("test", test)
}

/// `{ body = "...", headers = {...}, middleware = true }` → a test request.
fn call_of(method: &str, path: String, opts: Option<&Table>) -> mlua::Result<TestCall> {
    let mut call = TestCall {
        method: method.to_ascii_uppercase(),
        path,
        ..TestCall::default()
    };
    let Some(opts) = opts else { return Ok(call) };
    call.body = match opts.raw_get::<Value>("body")? {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(i) => Some(i.to_string().into_bytes()),
        Value::Number(n) => Some(n.to_string().into_bytes()),
        _ => None,
    };
    if let Value::Table(headers) = opts.raw_get::<Value>("headers")? {
        for pair in headers.pairs::<Value, Value>() {
            let (name, value) = pair?;
            if let (Value::String(n), Some(v)) = (&name, value.as_string()) {
                testkit::add_header(&mut call, &n.to_string_lossy(), &v.to_string_lossy());
            }
        }
    }
    call.middleware = opts.raw_get::<Option<bool>>("middleware")?.unwrap_or(false);
    Ok(call)
}

/// `{ status, body, json, headers }`; `body` only when non-empty, `json` only
/// when the body decodes as JSON.
fn reply_table(lua: &Lua, reply: testkit::TestReply) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("status", reply.status)?;
    if !reply.body.is_empty() {
        t.raw_set("body", lua.create_string(&reply.body)?)?;
    }
    if let Some(text) = reply.json_text() {
        if let Ok(v) = json::decode(lua, text) {
            t.raw_set("json", v)?;
        }
    }
    let headers = lua.create_table()?;
    for (name, value) in reply.joined_headers() {
        headers.raw_set(name, value)?;
    }
    t.raw_set("headers", headers)?;
    Ok(t)
}

/// The JSON form of a table (Hull's encoder: sorted keys, `{}` as `[]`), if it has one.
fn json_of(lua: &Lua, v: &Value) -> Option<Json> {
    let text = json::encode(lua, v).ok()?;
    serde_json::from_slice(&text).ok()
}

fn equal(lua: &Lua, a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Integer(x), Value::Number(y)) | (Value::Number(y), Value::Integer(x)) => {
            *x as f64 == *y
        }
        (Value::String(x), Value::String(y)) => x.as_bytes() == y.as_bytes(),
        (Value::Table(x), Value::Table(y)) if x != y => match (json_of(lua, a), json_of(lua, b)) {
            (Some(x), Some(y)) => testkit::json_equal(&x, &y),
            _ => false,
        },
        _ => a == b,
    }
}

fn shown(lua: &Lua, v: &Value) -> Shown {
    match v {
        Value::Nil => Shown::Text("nil".into()),
        Value::Boolean(_)
        | Value::Integer(_)
        | Value::Number(_)
        | Value::String(_)
        | Value::Table(_) => match json_of(lua, v) {
            Some(j) => Shown::Value(j),
            None => Shown::Text(format!("{v:?}")),
        },
        other => Shown::Text(other.type_name().to_string()),
    }
}

/// `test.eq(actual, expected [, msg])`: deep for tables, 1 == 1.0.
fn eq(lua: &Lua, (actual, expected, msg): (Value, Value, Option<String>)) -> mlua::Result<()> {
    if equal(lua, &actual, &expected) {
        return Ok(());
    }
    Err(mlua::Error::runtime(testkit::eq_failure(
        msg.as_deref(),
        &shown(lua, &expected),
        &shown(lua, &actual),
    )))
}

/// `test.err(fn [, substring])`.
fn expect_error(_: &Lua, (f, pattern): (Function, Option<String>)) -> mlua::Result<()> {
    match f.call::<Variadic<Value>>(()) {
        Ok(_) => Err(mlua::Error::runtime(
            "test.err: expected error but function succeeded",
        )),
        Err(e) => {
            let message = describe(&e);
            match pattern {
                Some(p) if !message.contains(&p) => Err(mlua::Error::runtime(format!(
                    "test.err: error '{message}' does not match pattern '{p}'"
                ))),
                _ => Ok(()),
            }
        }
    }
}
