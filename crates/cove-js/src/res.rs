//! `res` (Hull §4.2): one object per worker whose methods build the response
//! of the call in progress. They run on every request, so they are fast
//! methods (see raw/fastfn.rs).

use rquickjs::{Ctx, Object, Value};

use crate::bind::{text_arg, throw, type_name};
use crate::host::{with_call, Call};
use crate::raw::fastfn::{fast_table, install, Args, Method};
use crate::raw::value::{Val, View};

/// Optional status code argument `i`: integer, integral number or numeric
/// string. A missing one (the usual case) is seen from its tag, without the
/// owned value `Args::get` makes.
fn status_arg(
    ctx: &Ctx<'_>,
    args: &Args<'_>,
    i: usize,
    api: &str,
) -> rquickjs::Result<Option<i64>> {
    if args.is_absent(i) {
        return Ok(None);
    }
    let v = &args.get(ctx, i);
    let bad = |what: String| {
        throw(
            ctx,
            &format!("res.{api}: status must be an integer, got {what}"),
        )
    };
    if let Some(i) = v.as_int() {
        return Ok(Some(i64::from(i)));
    }
    if let Some(f) = v.as_float() {
        return if f.fract() == 0.0 && f.abs() < 1e15 {
            Ok(Some(f as i64))
        } else {
            Err(bad(cove_core::js_number(f)))
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

/// Run `f` on the call in progress; errors become JS errors. The methods
/// return `undefined` (or `this`, see the table).
fn on_call<'js>(
    ctx: &Ctx<'js>,
    api: &str,
    f: impl FnOnce(&mut Call) -> Result<(), String>,
) -> rquickjs::Result<Value<'js>> {
    with_call("res", api, f).map_err(|e| throw(ctx, &e))?;
    Ok(Value::new_undefined(ctx.clone()))
}

/// `res.json` body: plain values are written by json.rs, anything else by
/// `JSON.stringify`; `undefined` (and functions) become `null`, so the body
/// is always JSON.
fn json_body<'js>(ctx: &Ctx<'js>, data: Value<'js>) -> rquickjs::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    if crate::json::encode(ctx, &data, &mut out)? {
        return Ok(out);
    }
    Ok(match ctx.json_stringify(data)? {
        Some(s) => s.to_string()?.into_bytes(),
        None => b"null".to_vec(),
    })
}

fn status<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let code = status_arg(ctx, args, 0, "status")?
        .ok_or_else(|| throw(ctx, "res.status: status code missing"))?;
    on_call(ctx, "status", |c| {
        c.res
            .set_status(code)
            .map_err(|e| format!("res.status: {e}"))
    })
}

fn header<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let name = text_arg(ctx, &args.get(ctx, 0), "res.header", "the name")?;
    let value = text_arg(ctx, &args.get(ctx, 1), "res.header", "the value")?;
    on_call(ctx, "header", |c| {
        c.res
            .add_header(&name, &value)
            .map_err(|e| format!("res.header: {e}"))
    })
}

fn json<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let code = status_arg(ctx, args, 1, "json")?;
    let body = json_body(ctx, args.get(ctx, 0))?;
    on_call(ctx, "json", |c| {
        if let Some(code) = code {
            c.res
                .set_status(code)
                .map_err(|e| format!("res.json: {e}"))?;
        }
        c.res.json(body);
        Ok(())
    })
}

fn text<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let body = text_arg(ctx, &args.get(ctx, 0), "res.text", "the body")?;
    on_call(ctx, "text", |c| {
        c.res.text(body);
        Ok(())
    })
}

fn html<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let page = args.get(ctx, 0);
    let body = match crate::template::take_rendered(&page) {
        Some(text) => text,
        None => text_arg(ctx, &page, "res.html", "the body")?,
    };
    on_call(ctx, "html", |c| {
        let csp = c.csp.clone();
        c.res.html(body, csp.header());
        Ok(())
    })
}

fn redirect<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let url = text_arg(ctx, &args.get(ctx, 0), "res.redirect", "the URL")?;
    let code = status_arg(ctx, args, 1, "redirect")?;
    on_call(ctx, "redirect", |c| {
        c.res
            .redirect(&url, code)
            .map_err(|e| format!("res.redirect: {e}"))
    })
}

/// What an event or a published message carries, and whether it is
/// binary: a string as it is, bytes (`ArrayBuffer`, typed array) as they
/// are, anything else as JSON.
pub(crate) fn data_arg<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> rquickjs::Result<(Vec<u8>, bool)> {
    let val = Val::lend(&v);
    // Through the view: an ASCII string is copied from where it lies,
    // not converted by QuickJS into a C string first (~220 instructions
    // of every `ws.send`).
    if let View::Str(s) = val.view() {
        return Ok((s.text()?.into_bytes(), false));
    }
    if let Some(b) = crate::raw::bytes::binary_of(&val)? {
        return Ok((b, true));
    }
    Ok((json_body(ctx, v)?, false))
}

/// An optional string argument.
fn opt_text<'js>(
    ctx: &Ctx<'js>,
    args: &Args<'_>,
    i: usize,
    api: &str,
    what: &str,
) -> rquickjs::Result<Option<String>> {
    if args.is_absent(i) {
        return Ok(None);
    }
    text_arg(ctx, &args.get(ctx, i), api, what).map(Some)
}

/// A topic: a string.
fn topic_arg<'js>(
    ctx: &Ctx<'js>,
    args: &Args<'_>,
    i: usize,
    api: &str,
) -> rquickjs::Result<String> {
    let v = args.get(ctx, i);
    match v.as_string() {
        Some(s) => s.to_string(),
        None => Err(throw(
            ctx,
            &format!("{api}: the topic must be a string, got {}", type_name(&v)),
        )),
    }
}

fn subscribe<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let topic = topic_arg(ctx, args, 0, "res.subscribe")?;
    on_call(ctx, "subscribe", |c| {
        c.res
            .subscribe(&topic)
            .map_err(|e| format!("res.subscribe: {e}"))
    })
}

fn event<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let (data, _) = data_arg(ctx, args.get(ctx, 0))?;
    let name = opt_text(ctx, args, 1, "res.event", "the name")?;
    let id = opt_text(ctx, args, 2, "res.event", "the id")?;
    let event = cove_core::event(name.as_deref(), id.as_deref(), &data)
        .map_err(|e| throw(ctx, &format!("res.event: {e}")))?;
    on_call(ctx, "event", |c| {
        c.res.send_event(event);
        Ok(())
    })
}

/// `app.publish(topic, data)`: queued on the response in progress, sent
/// with it (cove-core events.rs).
fn publish<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let topic = topic_arg(ctx, args, 0, "app.publish")?;
    let (data, binary) = data_arg(ctx, args.get(ctx, 1))?;
    crate::host::try_with_call(|c| {
        c.res
            .publish(&topic, data.into(), binary)
            .map_err(|e| format!("app.publish: {e}"))
    })
    .unwrap_or_else(|| Err(cove_core::PUBLISH_OUTSIDE_REQUEST.into()))
    .map_err(|e| throw(ctx, &e))?;
    Ok(Value::new_undefined(ctx.clone()))
}

fast_table!(
    AppMethods,
    [Method {
        name: "app.publish",
        arity: 2,
        chains: false,
        run: publish
    }]
);

/// `app.publish`, for the prelude's `app`.
pub(crate) fn app_methods<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    install::<AppMethods>(&obj)?;
    Ok(obj)
}

fast_table!(
    ResMethods,
    [
        Method {
            name: "res.status",
            arity: 1,
            chains: true,
            run: status
        },
        Method {
            name: "res.header",
            arity: 2,
            chains: true,
            run: header
        },
        Method {
            name: "res.json",
            arity: 2,
            chains: false,
            run: json
        },
        Method {
            name: "res.text",
            arity: 1,
            chains: false,
            run: text
        },
        Method {
            name: "res.html",
            arity: 1,
            chains: false,
            run: html
        },
        Method {
            name: "res.redirect",
            arity: 2,
            chains: false,
            run: redirect
        },
        Method {
            name: "res.subscribe",
            arity: 1,
            chains: true,
            run: subscribe
        },
        Method {
            name: "res.event",
            arity: 3,
            chains: true,
            run: event
        },
    ]
);

/// The prototype every `res` inherits its methods from.
pub(crate) fn prototype<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let proto = Object::new(ctx.clone())?;
    install::<ResMethods>(&proto)?;
    Ok(proto)
}
