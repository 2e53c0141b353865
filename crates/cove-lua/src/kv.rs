//! `require("hull.kv")`: the store shared by all workers (cove-caps kv),
//! every function of its table under its name, converting values only.
//! On the local store each is a plain function (it answers at once); on
//! Redis each is a slow function (suspend.rs): the handler suspends while
//! the command is on its way, and the worker serves other requests.
//! Failures raise plain strings at the caller's line either way.

use mlua::{Lua, MultiValue, Table, Value};

use cove_caps::kv::{Kv, KvArg, KvCall, KvFn, KvOut, KvParam, KvValue, FUNCTIONS};
use cove_core::CapError;
use cove_core::{Job, JobOutput};

use crate::bind::raising;
use crate::suspend::{output, slow_function, Start};

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

/// The call's arguments, converted in `f.params` order.
fn args_of(f: &KvFn, args: &MultiValue) -> mlua::Result<Vec<KvArg>> {
    f.params
        .iter()
        .enumerate()
        .map(|(i, p)| arg_of(f, *p, args.get(i).unwrap_or(&Value::Nil)))
        .collect()
}

fn one(lua: &Lua, out: KvOut) -> mlua::Result<MultiValue> {
    Ok(MultiValue::from_iter([to_lua(lua, out)?]))
}

/// Turns a Redis reply into the function's result.
fn finish(lua: &Lua, out: JobOutput) -> mlua::Result<Result<MultiValue, String>> {
    match output::<Result<KvOut, CapError>>(out) {
        Ok(Ok(out)) => one(lua, out).map(Ok),
        Ok(Err(e)) => Ok(Err(e.message)),
        Err(msg) => Ok(Err(msg)),
    }
}

/// The module table over `kv`.
pub(crate) fn module(lua: &Lua, kv: &Kv) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    for f in FUNCTIONS {
        let kv = kv.clone();
        let func = if kv.is_local() {
            raising(lua, move |lua, args| {
                let out = f
                    .call(&kv, &args_of(f, &args)?)
                    .map_err(|e| mlua::Error::runtime(e.message))?;
                one(lua, out)
            })?
        } else {
            slow_function(lua, move |lua, args| {
                match f.start(&kv, &args_of(f, &args)?) {
                    KvCall::Done(Ok(out)) => one(lua, out).map(Start::Done),
                    KvCall::Done(Err(e)) => Err(mlua::Error::runtime(e.message)),
                    KvCall::Pending(reply) => Ok(Start::Job(Job::future(reply), finish)),
                }
            })?
        };
        t.raw_set(f.name, func)?;
    }
    Ok(t)
}
