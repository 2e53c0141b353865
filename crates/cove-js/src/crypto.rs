//! `hull:crypto`: registers every function of cove-caps' crypto table under
//! its JS name, converting arguments and results only.

use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{ArrayBuffer, Ctx, Exception, Function, Object, Promise, Value};

use cove_caps::crypto::{Arg, ArgValue, CryptoError, CryptoFn, CryptoResult, Out, FUNCTIONS};
use cove_core::{Job, JobOutput};

use crate::bind::type_name;
use crate::host::Host;

/// Data argument (Hull §6.5, crypto/mod.rs `Arg::Bytes`): a string as its
/// UTF-8 bytes, or bytes: an `ArrayBuffer` (what `crypto.random` returns),
/// a typed array (`Uint8Array`, …) or a `DataView`, each as the bytes it
/// covers. `None`: none of these.
fn bytes_of(v: &Value<'_>) -> rquickjs::Result<Option<Vec<u8>>> {
    if let Some(s) = v.as_string() {
        return Ok(Some(s.to_string()?.into_bytes()));
    }
    crate::bytes::binary_of(v)
}

fn args_of<'js>(
    ctx: &Ctx<'js>,
    f: &CryptoFn,
    args: &[Value<'js>],
) -> rquickjs::Result<Vec<ArgValue>> {
    f.args
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            let v = args
                .get(i)
                .cloned()
                .unwrap_or_else(|| Value::new_undefined(ctx.clone()));
            match kind {
                Arg::Bytes => bytes_of(&v)?.map(ArgValue::Bytes).ok_or_else(|| {
                    Exception::throw_type(
                        ctx,
                        &format!(
                            "crypto.{}: argument {} must be a string or bytes (an ArrayBuffer or a Uint8Array), got {}",
                            f.js,
                            i + 1,
                            type_name(&v)
                        ),
                    )
                }),
                // A non-integer count is out of range, like Hull's RangeError.
                Arg::Int => Ok(ArgValue::Int(
                    v.as_number()
                        .filter(|n| n.fract() == 0.0)
                        .map_or(0, |n| n as i64),
                )),
            }
        })
        .collect()
}

fn to_js<'js>(ctx: &Ctx<'js>, out: Out) -> rquickjs::Result<Value<'js>> {
    Ok(match out {
        Out::Str(s) => rquickjs::String::from_str(ctx.clone(), &s)?.into_value(),
        Out::Bytes(b) => ArrayBuffer::new(ctx.clone(), b)?.into_value(),
        Out::Text(Some(b)) => {
            rquickjs::String::from_str(ctx.clone(), &String::from_utf8_lossy(&b))?.into_value()
        }
        Out::Text(None) => Value::new_null(ctx.clone()),
        Out::Bool(b) => Value::new_bool(ctx.clone(), b),
        Out::KeyPair { public, secret } => {
            let o = Object::new(ctx.clone())?;
            o.set("publicKey", public)?;
            o.set("secretKey", secret)?;
            o.into_value()
        }
    })
}

fn call<'js>(
    ctx: Ctx<'js>,
    f: &'static CryptoFn,
    args: Rest<Value<'js>>,
) -> rquickjs::Result<Value<'js>> {
    let args = args_of(&ctx, f, &args.0)?;
    match f.call(&args, f.js).or_else(|e| f.js_fallback(e)) {
        Ok(out) => to_js(&ctx, out),
        Err(e) if f.args.contains(&Arg::Int) => Err(Exception::throw_range(&ctx, &e.to_string())),
        Err(e) => Err(Exception::throw_type(&ctx, &e.to_string())),
    }
}

/// `hashPasswordAsync(...)`: the work goes to the server's blocking pool
/// (engine.rs suspends the handler) and the promise settles with its result.
fn call_async<'js>(
    ctx: Ctx<'js>,
    host: &Rc<Host>,
    f: &'static CryptoFn,
    args: Rest<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    let args = args_of(&ctx, f, &args.0)?;
    let job = Job::new(move || f.call(&args, &format!("{}Async", f.js)));
    host.await_job(&ctx, job, finish)
}

/// An awaited job's output: the value, or the error to reject with.
fn finish<'js>(ctx: &Ctx<'js>, output: JobOutput) -> rquickjs::Result<Value<'js>> {
    let result = output
        .downcast::<CryptoResult>()
        .map(|r| *r)
        .unwrap_or_else(|_| Err(CryptoError("the background job failed".into())));
    match result {
        Ok(out) => to_js(ctx, out),
        Err(e) => Err(crate::bind::throw_cap(ctx, &e.cap())),
    }
}

/// The `crypto` object `hull:crypto` exports. Slow functions also come as
/// `…Async`, returning a promise, so awaiting them keeps the worker free.
pub(crate) fn module<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    for f in FUNCTIONS {
        let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            call(ctx, f, args)
        })?
        .with_name(f.js)?;
        obj.set(f.js, func)?;
        if f.slow {
            let name = format!("{}Async", f.js);
            let host = host.clone();
            let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
                call_async(ctx, &host, f, args)
            })?
            .with_name(&name)?;
            obj.set(name, func)?;
        }
    }
    Ok(obj)
}
