//! `require("hull.kv")`: the store shared by all workers (cove-caps kv),
//! every function of its table under its name, converting values only.

use mlua::{Lua, MultiValue, Table, Value};

use cove_caps::kv::{Kv, KvArg, KvFn, KvOut, KvParam, KvValue, FUNCTIONS};

pub(crate) const MODULE: &str = "hull.kv";

fn arg_of(f: &KvFn, param: KvParam, v: &Value) -> mlua::Result<KvArg> {
    let arg = match (param, v) {
        (KvParam::Key, Value::String(s)) => s.to_str().ok().map(|s| KvArg::Key(s.to_string())),
        (KvParam::Value, Value::String(s)) => {
            Some(KvArg::Value(KvValue::Str(s.as_bytes().to_vec())))
        }
        (KvParam::Value, Value::Integer(n)) => Some(KvArg::Value(KvValue::Int(*n))),
        (KvParam::Value, Value::Number(n)) => Some(KvArg::Value(KvValue::Float(*n))),
        (KvParam::Value, Value::Boolean(b)) => Some(KvArg::Value(KvValue::Bool(*b))),
        (KvParam::Step, Value::Nil) => Some(KvArg::Step(None)),
        (KvParam::Step, Value::Integer(n)) => Some(KvArg::Step(Some(*n))),
        (KvParam::Step, Value::Number(n)) if n.fract() == 0.0 && n.abs() < 9e15 => {
            Some(KvArg::Step(Some(*n as i64)))
        }
        (KvParam::Ttl, Value::Nil) => Some(KvArg::Ttl(None)),
        (KvParam::Ttl, Value::Integer(n)) => Some(KvArg::Ttl(Some(*n as f64))),
        (KvParam::Ttl, Value::Number(n)) => Some(KvArg::Ttl(Some(*n))),
        _ => None,
    };
    arg.ok_or_else(|| mlua::Error::runtime(f.bad_arg(param)))
}

fn to_lua(lua: &Lua, out: KvOut) -> mlua::Result<Value> {
    Ok(match out {
        KvOut::Nothing | KvOut::Value(None) | KvOut::Seconds(None) => Value::Nil,
        KvOut::Value(Some(KvValue::Str(s))) => Value::String(lua.create_string(s)?),
        KvOut::Value(Some(KvValue::Int(n))) | KvOut::Int(n) => Value::Integer(n),
        KvOut::Value(Some(KvValue::Float(n))) | KvOut::Seconds(Some(n)) => Value::Number(n),
        KvOut::Value(Some(KvValue::Bool(b))) | KvOut::Bool(b) => Value::Boolean(b),
    })
}

/// The module table over `kv`.
pub(crate) fn module(lua: &Lua, kv: &Kv) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for f in FUNCTIONS {
        let kv = kv.clone();
        let func = lua.create_function(move |lua, args: MultiValue| {
            let args = f
                .params
                .iter()
                .enumerate()
                .map(|(i, p)| arg_of(f, *p, args.get(i).unwrap_or(&Value::Nil)))
                .collect::<mlua::Result<Vec<_>>>()?;
            let out = f.call(&kv, &args).map_err(mlua::Error::runtime)?;
            to_lua(lua, out)
        })?;
        t.raw_set(f.name, func)?;
    }
    Ok(t)
}
