//! Every capability function of cove-caps' table (`cove_caps::cap`) under
//! its JS name, with one converter each way: a JS value to a [`CapValue`]
//! and back. The Hull forms are synchronous: what waits (the network,
//! Redis, PBKDF2) blocks the worker, as QuickJS cannot suspend a plain
//! call. Each that can wait also comes as `…Async`, returning a promise;
//! awaiting it keeps the worker free while the job runs (engine.rs), and
//! its refusals reject the promise rather than throw.
//!
//! Argument mistakes throw `TypeError`s (`RangeError` for a count out of
//! range), as Hull's JS does, and a capability's failure a `CoveError`
//! (bind.rs); either carries the failure's `code`.

use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{Array, ArrayBuffer, Ctx, Exception, Function, Object, Promise, Value};

use cove_caps::cap::{self, CapFn, CapValue, Runtime, Scope, Started};
use cove_caps::kv::Kv;
use cove_core::{CapError, JobOutput};

use crate::host::{settled, Host};

/// How deep an object argument is read (deeper: its type name only).
const MAX_DEPTH: usize = 32;

fn to_cap(v: &Value<'_>, depth: usize) -> rquickjs::Result<CapValue> {
    if v.is_undefined() {
        return Ok(CapValue::Nothing);
    }
    if v.is_null() {
        return Ok(CapValue::Null);
    }
    if let Some(b) = v.as_bool() {
        return Ok(CapValue::Bool(b));
    }
    if let Some(n) = v.as_int() {
        return Ok(CapValue::Int(n.into()));
    }
    if let Some(n) = v.as_float() {
        // Whole numbers below 2^53 are integers (they come back the same).
        return Ok(if n.fract() == 0.0 && n.abs() < 9e15 {
            CapValue::Int(n as i64)
        } else {
            CapValue::Num(n)
        });
    }
    if let Some(s) = v.as_string() {
        return Ok(CapValue::Str(s.to_string()?.into_bytes()));
    }
    if let Some(b) = crate::bytes::binary_of(v)? {
        return Ok(CapValue::Bytes(b));
    }
    if v.is_function() {
        return Ok(CapValue::Other("function"));
    }
    if depth >= MAX_DEPTH {
        return Ok(CapValue::Other(if v.is_array() {
            "array"
        } else {
            "object"
        }));
    }
    if let Some(a) = v.as_array() {
        let items = a
            .iter::<Value>()
            .map(|item| to_cap(&item?, depth + 1))
            .collect::<rquickjs::Result<_>>()?;
        return Ok(CapValue::List(items));
    }
    match v.as_object() {
        Some(o) => {
            let mut fields = Vec::new();
            for prop in o.props::<String, Value>() {
                let (k, v) = prop?;
                fields.push((k, to_cap(&v, depth + 1)?));
            }
            Ok(CapValue::Record(fields))
        }
        None => Ok(CapValue::Other("object")),
    }
}

fn to_js<'js>(ctx: &Ctx<'js>, v: CapValue) -> rquickjs::Result<Value<'js>> {
    let record = |fields: Vec<(String, CapValue)>| -> rquickjs::Result<Value<'js>> {
        let o = Object::new(ctx.clone())?;
        for (k, v) in fields {
            o.set(k, to_js(ctx, v)?)?;
        }
        Ok(o.into_value())
    };
    Ok(match v {
        CapValue::Nothing | CapValue::Other(_) => Value::new_undefined(ctx.clone()),
        CapValue::Null => Value::new_null(ctx.clone()),
        CapValue::Bool(b) => Value::new_bool(ctx.clone(), b),
        CapValue::Int(n) => Value::new_number(ctx.clone(), n as f64),
        CapValue::Num(n) => Value::new_number(ctx.clone(), n),
        CapValue::Str(b) => {
            rquickjs::String::from_str(ctx.clone(), &cove_core::utf8_lossy(&b))?.into_value()
        }
        CapValue::Bytes(b) => ArrayBuffer::new(ctx.clone(), b)?.into_value(),
        CapValue::List(items) => {
            let a = Array::new(ctx.clone())?;
            for (i, item) in items.into_iter().enumerate() {
                a.set(i, to_js(ctx, item)?)?;
            }
            a.into_value()
        }
        CapValue::Record(fields) => record(fields)?,
        CapValue::Results(fields) => record(
            fields
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        )?,
    })
}

/// Throw `e` as the class its code calls for: argument mistakes as Hull's
/// JS throws them (`TypeError`, `RangeError`), with the code set as a
/// `CoveError` carries it.
fn throw(ctx: &Ctx<'_>, e: &CapError) -> rquickjs::Error {
    match e.code {
        "crypto.range" => Exception::throw_range(ctx, &e.message),
        "crypto.input" => Exception::throw_type(ctx, &e.message),
        code if code.ends_with(".argument") => Exception::throw_type(ctx, &e.message),
        _ => return crate::bind::throw_cap(ctx, e),
    };
    let thrown = ctx.catch();
    if let Some(o) = thrown.as_object() {
        // A fresh error object takes a new property; nothing to report.
        let _ = o.set("code", e.code);
    }
    ctx.throw(thrown)
}

fn result<'js>(ctx: &Ctx<'js>, out: Result<CapValue, CapError>) -> rquickjs::Result<Value<'js>> {
    match out {
        Ok(v) => to_js(ctx, v),
        Err(e) => Err(throw(ctx, &e)),
    }
}

/// Settles an `…Async` promise with its job's output.
fn finish<'js>(ctx: &Ctx<'js>, out: JobOutput) -> rquickjs::Result<Value<'js>> {
    result(ctx, cap::job_result(out))
}

fn args_of(args: &[Value<'_>]) -> rquickjs::Result<Vec<CapValue>> {
    args.iter().map(|v| to_cap(v, 0)).collect()
}

/// One function as bound: what each of its calls needs.
struct Bound {
    host: Rc<Host>,
    kv: Kv,
    f: &'static CapFn,
}

impl Bound {
    /// Convert the arguments and start the call with the manifest's hosts
    /// and allow-list as the app set them.
    fn start(
        &self,
        args: &[Value<'_>],
        is_async: bool,
    ) -> rquickjs::Result<Result<Started, CapError>> {
        let args = args_of(args)?;
        let registry = self.host.registry.borrow();
        let scope = Scope {
            runtime: Runtime::Js,
            hosts: registry.hosts(),
            env_allow: registry.env_allow(),
            kv: &self.kv,
            is_async,
        };
        Ok(self.f.start(&scope, &args))
    }

    /// Hull's synchronous form: a job runs here, blocking the worker.
    fn call<'js>(&self, ctx: &Ctx<'js>, args: &[Value<'js>]) -> rquickjs::Result<Value<'js>> {
        match self.start(args, false)? {
            Ok(Started::Done(v)) => to_js(ctx, v),
            Ok(Started::Job(job)) => result(ctx, cap::job_result(job.run())),
            Err(e) => Err(throw(ctx, &e)),
        }
    }

    /// `…Async`: a promise, settled when the job is done.
    fn call_async<'js>(
        &self,
        ctx: &Ctx<'js>,
        args: &[Value<'js>],
    ) -> rquickjs::Result<Promise<'js>> {
        match self.start(args, true) {
            Ok(Ok(Started::Done(v))) => settled(ctx, to_js(ctx, v)),
            Ok(Ok(Started::Job(job))) => self.host.await_job(ctx, job, finish),
            Ok(Err(e)) => settled(ctx, Err(throw(ctx, &e))),
            Err(e) => settled(ctx, Err(e)),
        }
    }
}

/// The object of one module (its specifier: `hull:kv`).
fn module<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
    kv: &Kv,
    spec: &str,
) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    for f in cap::module_functions(spec) {
        let Some(name) = f.js else { continue };
        let bound = Rc::new(Bound {
            host: host.clone(),
            kv: kv.clone(),
            f,
        });
        let b = bound.clone();
        let sync = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            b.call(&ctx, &args.0)
        })?
        .with_name(name)?;
        obj.set(name, sync)?;
        if f.js_async {
            let name = format!("{name}Async");
            let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                bound.call_async(&ctx, &args.0)
            })?
            .with_name(&name)?;
            obj.set(name, func)?;
        }
    }
    Ok(obj)
}

/// Every capability module's object, under its export name, into `objects`.
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
    kv: &Kv,
    objects: &Object<'js>,
) -> rquickjs::Result<()> {
    for spec in cap::modules() {
        let name = cove_caps::api::module_by_js(spec)
            .map(|m| m.object_name())
            .unwrap_or(spec);
        objects.set(name, module(ctx, host, kv, spec)?)?;
    }
    Ok(())
}
