//! `hull:http` (Hull §6.7): every function of cove-caps' http table under
//! its JS name, converting arguments and results only. The Hull forms are
//! synchronous and block the worker (QuickJS cannot suspend a plain call);
//! each also comes as `…Async`, returning a promise, so awaiting it keeps
//! the worker free while the request runs on the blocking pool.

use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{Ctx, Exception, Function, Object, Promise, Value};

use cove_caps::http::{HttpError, HttpFn, Prepared, Request, Response, FUNCTIONS};
use cove_core::{Job, JobOutput};

use crate::host::{settled, Host};

fn arg<'js>(ctx: &Ctx<'js>, args: &[Value<'js>], i: usize) -> Value<'js> {
    args.get(i)
        .cloned()
        .unwrap_or_else(|| Value::new_undefined(ctx.clone()))
}

fn text(ctx: &Ctx<'_>, f: &HttpFn, what: &str, v: &Value<'_>) -> rquickjs::Result<String> {
    match v.as_string() {
        Some(s) => s.to_string(),
        None => Err(Exception::throw_type(
            ctx,
            &format!(
                "{}: {what} must be a string, got {}",
                f.failed,
                v.type_name()
            ),
        )),
    }
}

fn bytes(v: &Value<'_>) -> rquickjs::Result<Option<Vec<u8>>> {
    v.as_string()
        .map(|s| s.to_string().map(String::into_bytes))
        .transpose()
}

/// `opts.headers` as name/value pairs; number values are written out.
fn headers<'js>(
    ctx: &Ctx<'js>,
    f: &HttpFn,
    opts: Option<&Object<'js>>,
) -> rquickjs::Result<Vec<(String, String)>> {
    let Some(h) = opts.map(|o| o.get::<_, Value>("headers")).transpose()? else {
        return Ok(Vec::new());
    };
    let Some(h) = h.as_object() else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for prop in h.props::<String, Value>() {
        let (name, v) = prop?;
        let value = match v.as_number() {
            Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => (n as i64).to_string(),
            Some(n) => n.to_string(),
            None => text(ctx, f, "a header value", &v)?,
        };
        out.push((name, value));
    }
    Ok(out)
}

/// Read the arguments where the function's shape puts them.
fn request_of<'js>(ctx: &Ctx<'js>, f: &HttpFn, args: &[Value<'js>]) -> rquickjs::Result<Request> {
    let at = f.shape.positions();
    let method = at
        .method
        .map(|i| text(ctx, f, "the method", &arg(ctx, args, i)))
        .transpose()?;
    let url = text(ctx, f, "the URL", &arg(ctx, args, at.url))?;
    let opts = arg(ctx, args, at.opts).into_object();
    let body = match (at.body, &opts) {
        (Some(i), _) => bytes(&arg(ctx, args, i))?,
        (None, Some(o)) => bytes(&o.get::<_, Value>("body")?)?,
        (None, None) => None,
    };
    Ok(f.request(method, url, body, headers(ctx, f, opts.as_ref())?))
}

fn throw(ctx: &Ctx<'_>, e: &HttpError) -> rquickjs::Error {
    crate::bind::throw_cap(ctx, &e.cap())
}

fn prepare<'js>(
    ctx: &Ctx<'js>,
    host: &Host,
    f: &HttpFn,
    args: &[Value<'js>],
) -> rquickjs::Result<Prepared> {
    let req = request_of(ctx, f, args)?;
    let registry = host.registry.borrow();
    f.prepare(registry.hosts(), req).map_err(|e| throw(ctx, &e))
}

fn to_js<'js>(ctx: &Ctx<'js>, res: Response) -> rquickjs::Result<Value<'js>> {
    let o = Object::new(ctx.clone())?;
    o.set("status", res.status)?;
    o.set("body", String::from_utf8_lossy(&res.body).as_ref())?;
    let h = Object::new(ctx.clone())?;
    for (name, value) in res.headers {
        h.set(name, value)?;
    }
    o.set("headers", h)?;
    Ok(o.into_value())
}

fn finish<'js>(ctx: &Ctx<'js>, output: JobOutput) -> rquickjs::Result<Value<'js>> {
    match output.downcast::<Result<Response, HttpError>>().map(|r| *r) {
        Ok(Ok(res)) => to_js(ctx, res),
        Ok(Err(e)) => Err(throw(ctx, &e)),
        Err(_) => Err(Exception::throw_message(ctx, "the background job failed")),
    }
}

/// Hull's synchronous form: blocks the worker until the response is in.
fn call<'js>(
    ctx: Ctx<'js>,
    host: &Host,
    f: &HttpFn,
    args: Rest<Value<'js>>,
) -> rquickjs::Result<Value<'js>> {
    let prepared = prepare(&ctx, host, f, &args.0)?;
    match prepared.send() {
        Ok(res) => to_js(&ctx, res),
        Err(e) => Err(throw(&ctx, &e)),
    }
}

/// `…Async`: refusals reject the promise rather than throw.
fn call_async<'js>(
    ctx: Ctx<'js>,
    host: &Host,
    f: &HttpFn,
    args: Rest<Value<'js>>,
) -> rquickjs::Result<Promise<'js>> {
    match prepare(&ctx, host, f, &args.0) {
        Ok(prepared) => host.await_job(&ctx, Job::new(move || prepared.send()), finish),
        Err(e) => settled(&ctx, Err(e)),
    }
}

/// The `http` object `hull:http` exports.
pub(crate) fn module<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    for f in FUNCTIONS {
        let h = host.clone();
        let sync = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            call(ctx, &h, f, args)
        })?
        .with_name(f.js)?;
        obj.set(f.js, sync)?;
        let name = format!("{}Async", f.js);
        let h = host.clone();
        let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            call_async(ctx, &h, f, args)
        })?
        .with_name(&name)?;
        obj.set(name, func)?;
    }
    Ok(obj)
}
