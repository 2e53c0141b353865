//! `cove test` for JavaScript apps: the global `test` of Hull §9.2,
//! converting values to and from cove-caps' testkit, which does the work.
//! Unlike Hull, an async test function is awaited and its rejection fails it.

use std::rc::{Rc, Weak};
use std::time::Duration;

use rquickjs::function::Opt;
use rquickjs::{Array, Ctx, Exception, Function, Object, Value};

use cove_caps::testkit::{self, Shown, Suite, TestCall, Trail};
use cove_core::{AppFiles, Engine, Exchange, Flow, HandlerId, JobOutput, ScriptError};
use serde_json::Value as Json;

use crate::engine::{drain_jobs, run_entry, settle, ReqState};
use crate::error::describe;
use crate::{JsApp, JsEngine};

/// Glue only: collects cases and forwards to the natives.
const TEST_API: &str = r#"(natives) => {
  let cases = [];
  const test = (name, fn) => { cases.push([String(name), fn]); };
  for (const m of ["get", "post", "put", "patch", "delete"]) {
    test[m] = (path, opts) => natives.request(m, path, opts);
  }
  test.eq = natives.eq;
  test.ok = natives.ok;
  test.err = natives.err;
  globalThis.test = test;
  return () => { const taken = cases; cases = []; return taken; };
}"#;

/// Dispatches inside the context the test script is running in.
struct InCtx<'a, 'js> {
    engine: &'a JsEngine,
    ctx: Ctx<'js>,
}

impl Engine for InCtx<'_, '_> {
    type State = ReqState;
    fn call(
        &self,
        id: HandlerId,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        self.engine.call_in(&self.ctx, id, ex, st)
    }
    fn resume(
        &self,
        out: JobOutput,
        ex: &mut Exchange,
        st: &mut ReqState,
    ) -> Result<Flow, ScriptError> {
        self.engine.resume_with(&self.ctx, out, ex, st)
    }
}

/// Run every test file against `app`, which stays loaded (with its
/// database) across files, as in Hull.
pub fn run_suite(app: JsApp, files: &AppFiles, test_files: &[String], suite: &mut Suite) {
    // Hull: http and smtp are never configured in tests.
    app.engine.disable_outbound();
    let app = Rc::new(app);
    let weak = Rc::downgrade(&app);
    let budget = app.engine.budget.clone();
    app.engine.context.with(|ctx| {
        let take = match install(&ctx, weak, suite.trail.clone()) {
            Ok(f) => f,
            Err(e) => return suite.load_error(&describe(&ctx, e, &budget)),
        };
        for file in test_files {
            suite.file(file);
            let source = match files.read(file) {
                Ok(s) => s.into_owned(),
                Err(e) => {
                    suite.load_error(&format!("{file}: {e}"));
                    continue;
                }
            };
            budget.reset();
            if let Err(e) = run_entry(&ctx, file, source, &budget) {
                let _ = take.call::<_, Value>(());
                suite.load_error(&e);
                continue;
            }
            suite.trail.clear();
            let cases: Array = match take.call(()) {
                Ok(a) => a,
                Err(e) => return suite.load_error(&describe(&ctx, e, &budget)),
            };
            for case in cases.iter::<Array>() {
                let case = case.and_then(|c| Ok((c.get::<String>(0)?, c.get::<Function>(1)?)));
                match case {
                    Ok((name, f)) => {
                        suite.timed(&name, || run_case(&ctx, &app.engine, &f, &budget));
                    }
                    Err(e) => {
                        let error = describe(&ctx, e, &budget);
                        suite.case("(unnamed)", Err(error), Duration::ZERO);
                    }
                }
            }
        }
    });
}

/// Call a case; a returned promise is awaited.
fn run_case<'js>(
    ctx: &Ctx<'js>,
    engine: &JsEngine,
    f: &Function<'js>,
    budget: &crate::vm::Budget,
) -> Result<(), String> {
    budget.reset();
    let ret: Value = f.call(()).map_err(|e| describe(ctx, e, budget))?;
    drain_jobs(ctx);
    // Awaited blocking work (crypto …Async) runs inline in tests.
    engine.run_orphans(ctx);
    if let Some(p) = ret.as_promise() {
        settle(ctx, p, budget, "the test")?;
    }
    if budget.exceeded() {
        return Err(budget.message());
    }
    Ok(())
}

fn install<'js>(ctx: &Ctx<'js>, app: Weak<JsApp>, trail: Trail) -> rquickjs::Result<Function<'js>> {
    let natives = Object::new(ctx.clone())?;
    natives.set(
        "request",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, method: String, path: String, opts: Opt<Value<'js>>| {
                let app = app
                    .upgrade()
                    .ok_or_else(|| Exception::throw_message(&ctx, "test: the app is gone"))?;
                let call = call_of(&method, path, opts.0.as_ref().and_then(Value::as_object))?;
                let engine = InCtx {
                    engine: &app.engine,
                    ctx: ctx.clone(),
                };
                reply_object(&ctx, trail.dispatch(&app.routes, &engine, call))
            },
        )?,
    )?;
    natives.set("eq", Function::new(ctx.clone(), eq)?)?;
    natives.set(
        "ok",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, v: Value<'js>, msg: Opt<String>| {
                if truthy(&v) {
                    Ok(())
                } else {
                    let msg = msg.0.unwrap_or_else(|| "test.ok failed".into());
                    Err(Exception::throw_message(&ctx, &msg))
                }
            },
        )?,
    )?;
    natives.set("err", Function::new(ctx.clone(), expect_error)?)?;
    let mut opts = rquickjs::context::EvalOptions::default();
    opts.filename = Some("cove:test".into());
    opts.strict = true;
    let setup: Function = ctx.eval_with_options(TEST_API, opts)?;
    setup.call((natives,))
}

fn truthy(v: &Value<'_>) -> bool {
    if let Some(b) = v.as_bool() {
        b
    } else if let Some(n) = v.as_number() {
        n != 0.0 && !n.is_nan()
    } else if let Some(s) = v.as_string() {
        s.to_string().is_ok_and(|s| !s.is_empty())
    } else {
        !(v.is_null() || v.is_undefined())
    }
}

/// `{ body, headers, middleware }` → a test request.
fn call_of(method: &str, path: String, opts: Option<&Object<'_>>) -> rquickjs::Result<TestCall> {
    let mut call = TestCall {
        method: method.to_ascii_uppercase(),
        path,
        ..TestCall::default()
    };
    let Some(opts) = opts else { return Ok(call) };
    if let Some(body) = opts.get::<_, Value>("body")?.as_string() {
        call.body = Some(body.to_string()?.into_bytes());
    }
    if let Some(headers) = opts.get::<_, Value>("headers")?.as_object() {
        for pair in headers.props::<String, Value>() {
            let (name, value) = pair?;
            if let Some(v) = value.as_string() {
                testkit::add_header(&mut call, &name, &v.to_string()?);
            }
        }
    }
    call.middleware = opts.get::<_, Option<bool>>("middleware")?.unwrap_or(false);
    Ok(call)
}

/// `{ status, body, json, headers }`; `body` only when non-empty, `json` only
/// when the body parses as JSON.
fn reply_object<'js>(ctx: &Ctx<'js>, reply: testkit::TestReply) -> rquickjs::Result<Object<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set("status", reply.status)?;
    if !reply.body.is_empty() {
        let text = String::from_utf8_lossy(&reply.body);
        o.set("body", text.as_ref())?;
    }
    if let Some(text) = reply.json_text() {
        match ctx.json_parse(text.to_vec()) {
            Ok(v) => o.set("json", v)?,
            Err(rquickjs::Error::Exception) => drop(ctx.catch()),
            Err(e) => return Err(e),
        }
    }
    let headers = Object::new(ctx.clone())?;
    for (name, value) in reply.joined_headers() {
        headers.set(name, value)?;
    }
    o.set("headers", headers)?;
    Ok(o)
}

fn json_of<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Option<Json> {
    let text = ctx.json_stringify(v.clone()).ok()??;
    serde_json::from_str(&text.to_string().ok()?).ok()
}

fn equal<'js>(ctx: &Ctx<'js>, a: &Value<'js>, b: &Value<'js>) -> bool {
    if let (Some(x), Some(y)) = (a.as_number(), b.as_number()) {
        return x == y;
    }
    if a.type_of() != b.type_of() {
        return false;
    }
    if let (Some(x), Some(y)) = (a.as_string(), b.as_string()) {
        return x.to_string().ok() == y.to_string().ok();
    }
    if a == b {
        return true;
    }
    let plain = |v: &Value<'js>| v.is_object() && !v.is_function();
    if plain(a) && plain(b) {
        if let (Some(x), Some(y)) = (json_of(ctx, a), json_of(ctx, b)) {
            return testkit::json_equal(&x, &y);
        }
    }
    false
}

fn shown<'js>(ctx: &Ctx<'js>, v: &Value<'js>) -> Shown {
    if v.is_undefined() {
        return Shown::Text("undefined".into());
    }
    if v.is_function() {
        return Shown::Text("function".into());
    }
    match json_of(ctx, v) {
        Some(j) => Shown::Value(j),
        None => Shown::Text(format!("{:?}", v.type_of())),
    }
}

/// `test.eq(actual, expected [, msg])`: deep for objects and arrays.
fn eq<'js>(
    ctx: Ctx<'js>,
    actual: Value<'js>,
    expected: Value<'js>,
    msg: Opt<String>,
) -> rquickjs::Result<()> {
    if equal(&ctx, &actual, &expected) {
        return Ok(());
    }
    let message = testkit::eq_failure(
        msg.0.as_deref(),
        &shown(&ctx, &expected),
        &shown(&ctx, &actual),
    );
    Err(Exception::throw_message(&ctx, &message))
}

/// `test.err(fn [, substring])`: substring of the error's message.
fn expect_error<'js>(
    ctx: Ctx<'js>,
    f: Function<'js>,
    pattern: Opt<String>,
) -> rquickjs::Result<()> {
    match f.call::<_, Value>(()) {
        Ok(_) => Err(Exception::throw_message(
            &ctx,
            "test.err: expected error but function succeeded",
        )),
        Err(rquickjs::Error::Exception) => {
            let thrown = ctx.catch();
            let message = match thrown
                .as_object()
                .and_then(|o| o.get::<_, String>("message").ok())
            {
                Some(m) => m,
                None => thrown
                    .as_string()
                    .and_then(|s| s.to_string().ok())
                    .unwrap_or_default(),
            };
            match pattern.0 {
                Some(p) if !message.contains(&p) => Err(Exception::throw_message(
                    &ctx,
                    &format!("test.err: error {message:?} does not match pattern {p:?}"),
                )),
                _ => Ok(()),
            }
        }
        Err(e) => Err(e),
    }
}
