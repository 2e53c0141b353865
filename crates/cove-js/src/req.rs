//! `req` fields (Hull §4.1), built from the request of the call in progress
//! the first time a script reads them. The prelude's getters check that the
//! `req` is the current one and call `get(req, which)`, which builds the
//! value and makes it an ordinary own property of that `req`. `params` and
//! `body`, when there are any, are defined as the `req` is made.

use rquickjs::{Ctx, Object, Value};

use cove_core::{parse_query, Request};

use crate::bind::throw;
use crate::host::with_call;
use crate::raw::fastfn::{fast_table, install, Args, Method};
use crate::raw::fields::{define_field, object_from_pairs};
use crate::raw::value::{Val, View};

/// Field names by the `which` the prelude passes (same order as its list).
pub(crate) const FIELDS: [&str; 7] = [
    "query", "headers", "method", "path", "params", "body", "ctx",
];

fn field<'js>(ctx: &Ctx<'js>, req: &Request, name: &str) -> rquickjs::Result<Value<'js>> {
    let text = |s: &str| rquickjs::String::from_str(ctx.clone(), s).map(|s| s.into_value());
    match name {
        "query" => {
            let pairs = req.query.as_deref().map(parse_query).unwrap_or_default();
            object_from_pairs(ctx, &pairs, false)
        }
        "headers" => object_from_pairs(ctx, &req.joined_headers(), false),
        "method" => text(&req.method),
        "path" => text(&req.path),
        "params" => object_from_pairs(ctx, &req.params, true),
        "ctx" => Ok(Object::new(ctx.clone())?.into_value()),
        // JS strings hold text: the body is read as UTF-8 (as in Hull).
        _ => match &req.body {
            Some(b) => text(&cove_core::utf8_lossy(b)),
            None => Ok(Value::new_null(ctx.clone())),
        },
    }
}

/// The getter of field `magic` on `Req.prototype`: build the value from the
/// request in progress and make it an own property of this `req`.
fn get<'js>(ctx: &Ctx<'js>, args: &Args<'_>) -> rquickjs::Result<Value<'js>> {
    let index = args.magic();
    let name = FIELDS.get(index).copied().unwrap_or("?");
    let id = args.this_id();
    let value = with_call("req", name, |call| {
        if call.req_id != id {
            return Err(format!(
                "req.{name} read after its request ended; copy what you need while handling it"
            ));
        }
        Ok(field(ctx, &call.req, name))
    })
    .map_err(|e| throw(ctx, &e))??;
    define_field(ctx, &args.this(ctx), index, &value)?;
    Ok(value)
}

/// Index in [`FIELDS`] of `params` and of `body`.
const PARAMS: usize = 4;
const BODY: usize = 5;

/// Define, on a new `req`, the fields its handler is all but sure to read:
/// `params` when the route has any, `body` when the request has one. Read
/// through the getter, each cost a native call and a define on top of the
/// value (~900 instructions).
pub(crate) fn define_eager<'js>(ctx: &Ctx<'js>, req: &Value<'js>) -> rquickjs::Result<()> {
    for index in [PARAMS, BODY] {
        let name = FIELDS[index];
        let value = with_call("req", name, |call| {
            let present = match index {
                PARAMS => !call.req.params.is_empty(),
                _ => call.req.body.is_some(),
            };
            Ok(present.then(|| field(ctx, &call.req, name)))
        })
        .map_err(|e| throw(ctx, &e))?;
        if let Some(value) = value.transpose()? {
            define_field(ctx, req, index, &value)?;
        }
    }
    Ok(())
}

/// Build every field of the call's own `req` at `obj` but `ctx` (each
/// getter makes its value an own property), for what lists own
/// properties, as a template's key/value loop does: it then sees what
/// Hull's plain object has. Other objects are left alone.
pub(crate) fn fill(ctx: &Ctx<'_>, obj: &Val<'_>) {
    let View::Object(o) = obj.view() else {
        return;
    };
    let id = o.id();
    if crate::host::if_call(|call| call.req_id == id) != Some(true) {
        return;
    }
    for name in FIELDS.iter().filter(|&&n| n != "ctx") {
        if o.get_named(name).is_err() {
            let _ = ctx.catch();
        }
    }
}

const fn getter(name: &'static str) -> Method {
    Method {
        name,
        arity: 0,
        chains: false,
        run: get,
    }
}

// One getter per field, in FIELDS order (the magic number is the index).
fast_table!(
    ReqGetters,
    [
        getter("query"),
        getter("headers"),
        getter("method"),
        getter("path"),
        getter("params"),
        getter("body"),
        getter("ctx"),
    ]
);

/// The getters, by field name, for the prelude to put on `Req.prototype`.
pub(crate) fn getters<'js>(ctx: &Ctx<'js>) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    install::<ReqGetters>(&obj)?;
    Ok(obj)
}
