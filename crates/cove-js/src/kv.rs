//! `hull:kv`: the store shared by all workers (cove-caps kv), every
//! function of its table under its name, converting values only.

use rquickjs::function::Rest;
use rquickjs::{Ctx, Exception, Function, Object, Value};

use cove_caps::kv::{Kv, KvArg, KvFn, KvOut, KvParam, KvValue, FUNCTIONS};

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

/// The module object over `kv`.
pub(crate) fn module<'js>(ctx: &Ctx<'js>, kv: &Kv) -> rquickjs::Result<Object<'js>> {
    let obj = Object::new(ctx.clone())?;
    for f in FUNCTIONS {
        let kv = kv.clone();
        let func = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            let undefined = Value::new_undefined(ctx.clone());
            let args = f
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| arg_of(&ctx, f, *p, args.0.get(i).unwrap_or(&undefined)))
                .collect::<rquickjs::Result<Vec<_>>>()?;
            match f.call(&kv, &args) {
                Ok(out) => to_js(&ctx, out),
                Err(e) => Err(Exception::throw_message(&ctx, &e)),
            }
        })?
        .with_name(f.name)?;
        obj.set(f.name, func)?;
    }
    Ok(obj)
}
