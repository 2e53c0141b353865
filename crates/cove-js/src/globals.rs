//! The native functions handed to the prelude (`raw.*`). Each is a thin
//! adapter: convert arguments, call the capability, convert the result.
//! Failures are thrown as JS errors whose message names the API.

use std::rc::Rc;

use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Persistent, Value};

use cove_caps::log::Level;
use cove_caps::time;
use cove_core::Phase;

use crate::bind::{set_fn, throw};
use crate::host::Host;
use crate::raw::fastfn::{fast_table, install, Args, Method};

/// `raw.register(api, phase, method, pattern, fn)`: a route (`phase` null)
/// or a middleware.
fn add_app<'js>(raw: &Object<'js>, host: &Rc<Host>) -> rquickjs::Result<()> {
    let h = host.clone();
    set_fn(
        raw,
        "register",
        move |ctx: Ctx<'js>,
              api: String,
              phase: Value<'js>,
              method: String,
              pattern: String,
              f: Function<'js>| {
            let saved = Persistent::save(&ctx, f);
            let phase = match phase.as_string().map(|s| s.to_string()).transpose()? {
                None => None,
                Some(p) if p == "pre" => Some(Phase::Pre),
                Some(_) => Some(Phase::Post),
            };
            let result = h
                .registry
                .borrow_mut()
                .register(&api, saved, |t, id| match phase {
                    None => t.add_route(&method, &pattern, id),
                    Some(phase) => t.add_middleware(phase, &method, &pattern, id),
                });
            result.map_err(|e| throw(&ctx, &e))
        },
    )?;
    let h = host.clone();
    set_fn(raw, "manifest", move |ctx: Ctx<'js>, text: String| {
        let fail = |e: String| throw(&ctx, &format!("app.manifest: {e}"));
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
        h.registry
            .borrow_mut()
            .set_manifest(value)
            .map_err(|e| throw(&ctx, &e))
    })
}

fn time_now<'js>(ctx: &Ctx<'js>, _: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    // Seconds and milliseconds do not fit an int32: doubles hold them exactly.
    Ok(Value::new_float(ctx.clone(), time::now() as f64))
}

fn time_now_ms<'js>(ctx: &Ctx<'js>, _: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    Ok(Value::new_float(ctx.clone(), time::now_ms() as f64))
}

fn time_clock<'js>(ctx: &Ctx<'js>, _: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    Ok(Value::new_float(ctx.clone(), time::clock() as f64))
}

fn time_date<'js>(ctx: &Ctx<'js>, _: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    rquickjs::String::from_str(ctx.clone(), &time::date()).map(|s| s.into_value())
}

fn time_datetime<'js>(ctx: &Ctx<'js>, _: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    rquickjs::String::from_str(ctx.clone(), &time::datetime()).map(|s| s.into_value())
}

// `hull:time`: called on many requests, so fast methods (raw/fastfn.rs).
fast_table!(
    TimeMethods,
    [
        Method {
            name: "time.now",
            arity: 0,
            chains: false,
            run: time_now
        },
        Method {
            name: "time.nowMs",
            arity: 0,
            chains: false,
            run: time_now_ms
        },
        Method {
            name: "time.clock",
            arity: 0,
            chains: false,
            run: time_clock
        },
        Method {
            name: "time.date",
            arity: 0,
            chains: false,
            run: time_date
        },
        Method {
            name: "time.datetime",
            arity: 0,
            chains: false,
            run: time_datetime
        },
    ]
);

fn add_log<'js>(raw: &Object<'js>) -> rquickjs::Result<()> {
    set_fn(raw, "log", |level: i32, lines: Rest<String>| {
        let level = match level {
            0 => Level::Debug,
            1 => Level::Info,
            2 => Level::Warn,
            _ => Level::Error,
        };
        if cove_core::log::enabled(level) {
            cove_caps::log::app(level, lines.0.iter().map(String::as_str));
        }
    })?;
    set_fn(raw, "logEnabled", |level: i32| {
        let level = if level == 0 {
            Level::Debug
        } else {
            Level::Info
        };
        cove_core::log::enabled(level)
    })
}

/// The `raw` object the prelude receives.
pub(crate) fn raw_object<'js>(ctx: &Ctx<'js>, host: &Rc<Host>) -> rquickjs::Result<Object<'js>> {
    let raw = Object::new(ctx.clone())?;
    add_app(&raw, host)?;
    let time = Object::new(ctx.clone())?;
    install::<TimeMethods>(&time)?;
    raw.set("time", time)?;
    raw.set("reqGetters", crate::req::getters(ctx)?)?;
    add_log(&raw)?;
    crate::db::add(&raw, host)?;
    raw.set("resProto", crate::res::prototype(ctx)?)?;
    Ok(raw)
}
