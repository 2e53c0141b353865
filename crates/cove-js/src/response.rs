//! `res` (Hull §4.2): every method is a native function on one prototype;
//! each request's `res` is an empty object inheriting from it. The methods
//! build the response of the call in progress (kept in [`Host`]).

use std::rc::Rc;

use rquickjs::function::{Opt, This};
use rquickjs::{Ctx, Object, Value};

use crate::host::{Call, Host};
use crate::native::{js_number, opt_value, set_fn, text_arg, throw, type_name};

/// An optional status code: integer, integral number or numeric string.
fn status_arg(ctx: &Ctx<'_>, v: &Value<'_>, api: &str) -> rquickjs::Result<Option<i64>> {
    let bad = |what: String| {
        throw(
            ctx,
            &format!("res.{api}: status must be an integer, got {what}"),
        )
    };
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    if let Some(i) = v.as_int() {
        return Ok(Some(i64::from(i)));
    }
    if let Some(f) = v.as_float() {
        return if f.fract() == 0.0 && f.abs() < 1e15 {
            Ok(Some(f as i64))
        } else {
            Err(bad(js_number(f)))
        };
    }
    if let Some(s) = v.as_string() {
        let text = s.to_string()?;
        return text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| bad(format!("{text:?}")));
    }
    Err(bad(type_name(v).to_string()))
}

/// Run `f` on the call in progress; errors become JS errors.
fn with_call<R>(
    ctx: &Ctx<'_>,
    host: &Host,
    api: &str,
    f: impl FnOnce(&mut Call) -> Result<R, String>,
) -> rquickjs::Result<R> {
    host.with_call("res", api, f).map_err(|e| throw(ctx, &e))
}

/// `res.json` body: `JSON.stringify(data)`; `undefined` (and functions)
/// become `null`, so the body is always JSON.
fn json_body<'js>(ctx: &Ctx<'js>, data: Value<'js>) -> rquickjs::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    if crate::jsonenc::encode(ctx, &data, &mut out)? {
        return Ok(out);
    }
    Ok(match ctx.json_stringify(data)? {
        Some(s) => s.to_string()?.into_bytes(),
        None => b"null".to_vec(),
    })
}

pub(crate) fn prototype<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let proto = Object::new(ctx.clone())?;

    let h = host.clone();
    set_fn(
        &proto,
        "status",
        move |ctx: Ctx<'js>, this: This<Value<'js>>, code: Opt<Value<'js>>| {
            let code = status_arg(&ctx, &opt_value(&ctx, code), "status")?
                .ok_or_else(|| throw(&ctx, "res.status: status code missing"))?;
            with_call(&ctx, &h, "status", |c| {
                c.res
                    .set_status(code)
                    .map_err(|e| format!("res.status: {e}"))
            })?;
            Ok::<_, rquickjs::Error>(this.0)
        },
    )?;
    let h = host.clone();
    set_fn(
        &proto,
        "header",
        move |ctx: Ctx<'js>,
              this: This<Value<'js>>,
              name: Opt<Value<'js>>,
              value: Opt<Value<'js>>| {
            let name = text_arg(&ctx, &opt_value(&ctx, name), "res.header", "the name")?;
            let value = text_arg(&ctx, &opt_value(&ctx, value), "res.header", "the value")?;
            with_call(&ctx, &h, "header", |c| {
                c.res
                    .add_header(&name, &value)
                    .map_err(|e| format!("res.header: {e}"))
            })?;
            Ok::<_, rquickjs::Error>(this.0)
        },
    )?;
    let h = host.clone();
    set_fn(
        &proto,
        "json",
        move |ctx: Ctx<'js>, data: Opt<Value<'js>>, code: Opt<Value<'js>>| {
            let code = status_arg(&ctx, &opt_value(&ctx, code), "json")?;
            let body = json_body(&ctx, opt_value(&ctx, data))?;
            with_call(&ctx, &h, "json", |c| {
                if let Some(code) = code {
                    c.res
                        .set_status(code)
                        .map_err(|e| format!("res.json: {e}"))?;
                }
                c.res.json(body);
                Ok(())
            })
        },
    )?;
    let h = host.clone();
    set_fn(
        &proto,
        "text",
        move |ctx: Ctx<'js>, body: Opt<Value<'js>>| {
            let body = text_arg(&ctx, &opt_value(&ctx, body), "res.text", "the body")?;
            with_call(&ctx, &h, "text", |c| {
                c.res.text(body);
                Ok(())
            })
        },
    )?;
    let h = host.clone();
    set_fn(
        &proto,
        "html",
        move |ctx: Ctx<'js>, body: Opt<Value<'js>>| {
            let body = text_arg(&ctx, &opt_value(&ctx, body), "res.html", "the body")?;
            with_call(&ctx, &h, "html", |c| {
                let csp = c.csp.clone();
                c.res.html(body, csp.header());
                Ok(())
            })
        },
    )?;
    let h = host.clone();
    set_fn(
        &proto,
        "redirect",
        move |ctx: Ctx<'js>, url: Opt<Value<'js>>, code: Opt<Value<'js>>| {
            let url = text_arg(&ctx, &opt_value(&ctx, url), "res.redirect", "the URL")?;
            let code = status_arg(&ctx, &opt_value(&ctx, code), "redirect")?;
            with_call(&ctx, &h, "redirect", |c| {
                c.res
                    .redirect(&url, code)
                    .map_err(|e| format!("res.redirect: {e}"))
            })
        },
    )?;
    Ok(proto)
}
