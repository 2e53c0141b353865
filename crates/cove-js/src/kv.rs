//! `hull:kv`: the store shared by all workers (cove-caps kv), every
//! function of its table under its name, converting values only. The Hull
//! forms are synchronous: on Redis they block the worker for the round trip
//! (QuickJS cannot suspend a plain call). Each also comes as `…Async`,
//! returning a promise; awaiting it on Redis keeps the worker free while
//! the command is on its way (on the local store it is settled at once).

use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{Ctx, Exception, Function, Object, Promise, Value};

use cove_caps::kv::{Kv, KvArg, KvCall, KvFn, KvOut, KvParam, KvValue, FUNCTIONS};
use cove_core::CapError;
use cove_core::{Job, JobOutput};

use crate::host::{settled, Host};

fn arg_of(ctx: &Ctx<'_>, f: &KvFn, param: KvParam, v: &Value<'_>) -> rquickjs::Result<KvArg> {
    let absent = v.is_undefined() || v.is_null();
    let number = v.as_number();
    let arg = match param {
        KvParam::Key => v
            .as_string()
            .and_then(|s| s.to_string().ok())
            .map(KvArg::Key),
        KvParam::Value => {
            if let Some(s) = v.as_string() {
                s.to_string()
                    .ok()
                    .map(|s| KvArg::Value(KvValue::Str(s.into_bytes())))
            } else if let Some(b) = v.as_bool() {
                Some(KvArg::Value(KvValue::Bool(b)))
            } else if let Some(n) = v.as_int() {
                Some(KvArg::Value(KvValue::Int(n.into())))
            } else {
                number.map(|n| {
                    // Whole numbers stay integers (they come back the same).
                    if n.fract() == 0.0 && n.abs() < 9e15 {
                        KvArg::Value(KvValue::Int(n as i64))
                    } else {
                        KvArg::Value(KvValue::Float(n))
                    }
                })
            }
        }
        KvParam::Step if absent => Some(KvArg::Step(None)),
        KvParam::Step => number
            .filter(|n| n.fract() == 0.0 && n.abs() < 9e15)
            .map(|n| KvArg::Step(Some(n as i64))),
        KvParam::Ttl if absent => Some(KvArg::Ttl(None)),
        KvParam::Ttl => number.map(|n| KvArg::Ttl(Some(n))),
    };
    arg.ok_or_else(|| Exception::throw_type(ctx, &f.bad_arg(param)))
}

fn to_js<'js>(ctx: &Ctx<'js>, out: KvOut) -> rquickjs::Result<Value<'js>> {
    Ok(match out {
        KvOut::Nothing => Value::new_undefined(ctx.clone()),
        KvOut::Value(None) | KvOut::Seconds(None) => Value::new_null(ctx.clone()),
        KvOut::Value(Some(KvValue::Str(s))) => {
            rquickjs::String::from_str(ctx.clone(), &String::from_utf8_lossy(&s))?.into_value()
        }
        KvOut::Value(Some(KvValue::Int(n))) | KvOut::Int(n) => {
            Value::new_number(ctx.clone(), n as f64)
        }
        KvOut::Value(Some(KvValue::Float(n))) | KvOut::Seconds(Some(n)) => {
            Value::new_number(ctx.clone(), n)
        }
        KvOut::Value(Some(KvValue::Bool(b))) | KvOut::Bool(b) => Value::new_bool(ctx.clone(), b),
    })
}

/// The call's arguments, converted in `f.params` order.
fn args_of<'js>(ctx: &Ctx<'js>, f: &KvFn, args: &[Value<'js>]) -> rquickjs::Result<Vec<KvArg>> {
    let undefined = Value::new_undefined(ctx.clone());
    f.params
        .iter()
        .enumerate()
        .map(|(i, p)| arg_of(ctx, f, *p, args.get(i).unwrap_or(&undefined)))
        .collect()
}

fn result<'js>(ctx: &Ctx<'js>, out: Result<KvOut, CapError>) -> rquickjs::Result<Value<'js>> {
    match out {
        Ok(out) => to_js(ctx, out),
        Err(e) => Err(crate::bind::throw_cap(ctx, &e)),
    }
}

/// Settles an `…Async` promise with the Redis reply.
fn finish<'js>(ctx: &Ctx<'js>, output: JobOutput) -> rquickjs::Result<Value<'js>> {
    match output.downcast::<Result<KvOut, CapError>>() {
        Ok(out) => result(ctx, *out),
        Err(_) => Err(Exception::throw_message(ctx, "the background job failed")),
    }
}

/// `…Async`: refusals reject the promise rather than throw.
fn call_async<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    kv: &Kv,
    f: &KvFn,
    args: &[Value<'js>],
) -> rquickjs::Result<Promise<'js>> {
    let args = match args_of(ctx, f, args) {
        Ok(args) => args,
        Err(e) => return settled(ctx, Err(e)),
    };
    match f.start(kv, &args) {
        KvCall::Done(out) => settled(ctx, result(ctx, out)),
        KvCall::Pending(reply) => host.await_job(ctx, Job::future(reply), finish),
    }
}

/// The module object over `kv`.
pub(crate) fn module<'js>(
    ctx: &Ctx<'js>,
    host: &Rc<Host>,
    kv: &Kv,
) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    for f in FUNCTIONS {
        let store = kv.clone();
        let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            let args = args_of(&ctx, f, &args.0)?;
            result(&ctx, f.call(&store, &args))
        })?
        .with_name(f.name)?;
        obj.set(f.name, func)?;
        let name = format!("{}Async", f.name);
        let (h, store) = (host.clone(), kv.clone());
        let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            call_async(&ctx, &h, &store, f, &args.0)
        })?
        .with_name(&name)?;
        obj.set(name, func)?;
    }
    Ok(obj)
}
