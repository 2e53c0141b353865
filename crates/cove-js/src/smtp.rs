//! `hull:smtp` (Hull §6.8): `smtp.send(opts)` over cove-caps' smtp,
//! converting the options and the `{ok, error}` result only. `send` blocks
//! the worker like Hull's; `sendAsync` returns a promise and keeps the
//! worker free while the message goes out on the blocking pool.

use std::rc::Rc;

use rquickjs::function::Opt;
use rquickjs::{Ctx, Exception, Function, Object, Promise, Value};

use cove_caps::smtp::{self, Prepared, SmtpError};
use cove_core::{Job, JobOutput};

use crate::host::{settled, Host};

/// `{ok: true}` or `{ok: false, error: "..."}`.
fn result<'js>(ctx: &Ctx<'js>, sent: Result<(), SmtpError>) -> rquickjs::Result<Value<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set("ok", sent.is_ok())?;
    if let Err(e) = sent {
        o.set("error", e.to_string())?;
    }
    Ok(o.into_value())
}

/// The options through JSON (one converter for every shape Hull accepts),
/// checked: a prepared send, or the result to return now.
fn prepare<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    opts: Opt<Value<'js>>,
) -> rquickjs::Result<Result<Prepared, Value<'js>>> {
    let opts = match opts.0 {
        Some(v) => ctx.json_stringify(v)?,
        None => None,
    };
    let opts: serde_json::Value = match opts {
        Some(text) => serde_json::from_str(&text.to_string()?)
            .map_err(|e| Exception::throw_type(ctx, &format!("smtp.send: options: {e}")))?,
        None => serde_json::Value::Null,
    };
    match smtp::prepare(host.registry.borrow().hosts(), &opts) {
        Ok(prepared) => Ok(Ok(prepared)),
        Err(e) if e.raises() => Err(crate::bind::throw_cap(ctx, &e.cap())),
        Err(e) => Ok(Err(result(ctx, Err(e))?)),
    }
}

fn finish<'js>(ctx: &Ctx<'js>, output: JobOutput) -> rquickjs::Result<Value<'js>> {
    match output.downcast::<Result<(), SmtpError>>() {
        Ok(sent) => result(ctx, *sent),
        Err(_) => Err(Exception::throw_message(ctx, "the background job failed")),
    }
}

/// The `smtp` object `hull:smtp` exports.
pub(crate) fn module<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    let h = host.clone();
    let send = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, opts: Opt<Value<'js>>| match prepare(&ctx, &h, opts)? {
            Ok(prepared) => result(&ctx, prepared.send()),
            Err(now) => Ok(now),
        },
    )?
    .with_name("send")?;
    obj.set("send", send)?;
    let h = host.clone();
    let send_async = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, opts: Opt<Value<'js>>| -> rquickjs::Result<Promise<'js>> {
            match prepare(&ctx, &h, opts) {
                Ok(Ok(prepared)) => h.await_job(&ctx, Job::new(move || prepared.send()), finish),
                Ok(Err(now)) => settled(&ctx, Ok(now)),
                Err(e) => settled(&ctx, Err(e)),
            }
        },
    )?
    .with_name("sendAsync")?;
    obj.set("sendAsync", send_async)?;
    Ok(obj)
}
