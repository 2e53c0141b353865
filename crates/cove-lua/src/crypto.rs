//! The `crypto` global: every function of cove-caps' crypto table under its
//! Lua name, converting arguments and results only. Slow functions (PBKDF2)
//! are made with suspend.rs, so a handler can suspend on them. Failures of
//! either kind raise plain strings at the caller's line.

use mlua::{Lua, MultiValue, Value};

use cove_caps::crypto::{Arg, ArgValue, CryptoFn, CryptoResult, Out, FUNCTIONS};
use cove_core::{Job, JobOutput};

use crate::bind::raising;
use crate::suspend::{output, slow_function, Start};

pub(crate) fn args_of(f: &CryptoFn, args: &MultiValue) -> mlua::Result<Vec<ArgValue>> {
    f.args
        .iter()
        .enumerate()
        .map(|(i, kind)| {
            let v = args.get(i).unwrap_or(&Value::Nil);
            match (kind, v) {
                (Arg::Bytes, Value::String(s)) => Ok(ArgValue::Bytes(s.as_bytes().to_vec())),
                (Arg::Int, Value::Integer(n)) => Ok(ArgValue::Int(*n)),
                (Arg::Int, Value::Number(n)) if n.fract() == 0.0 => Ok(ArgValue::Int(*n as i64)),
                // A fractional count is out of range.
                (Arg::Int, Value::Number(_)) => Ok(ArgValue::Int(0)),
                (Arg::Bytes, _) => Err(mlua::Error::runtime(format!(
                    "crypto.{}: argument {} must be a string, got {}",
                    f.lua,
                    i + 1,
                    v.type_name()
                ))),
                (Arg::Int, _) => Err(mlua::Error::runtime(format!(
                    "crypto.{}: argument {} must be a number, got {}",
                    f.lua,
                    i + 1,
                    v.type_name()
                ))),
            }
        })
        .collect()
}

pub(crate) fn to_lua(lua: &Lua, out: Out) -> mlua::Result<MultiValue> {
    let one = |v: Value| Ok(MultiValue::from_iter([v]));
    match out {
        Out::Str(s) => one(Value::String(lua.create_string(&s)?)),
        Out::Bytes(b) | Out::Text(Some(b)) => one(Value::String(lua.create_string(&b)?)),
        Out::Text(None) => one(Value::Nil),
        Out::Bool(b) => one(Value::Boolean(b)),
        Out::KeyPair { public, secret } => Ok(MultiValue::from_iter([
            Value::String(lua.create_string(&public)?),
            Value::String(lua.create_string(&secret)?),
        ])),
    }
}

/// A slow function's job output as Lua results.
fn finish(lua: &Lua, out: JobOutput) -> mlua::Result<Result<MultiValue, String>> {
    match output::<CryptoResult>(out) {
        Ok(Ok(out)) => to_lua(lua, out).map(Ok),
        Ok(Err(e)) => Ok(Err(e.to_string())),
        Err(msg) => Ok(Err(msg)),
    }
}

pub(crate) fn install(lua: &Lua) -> mlua::Result<()> {
    let t = lua.create_table()?;
    for f in FUNCTIONS {
        let func = if f.slow {
            slow_function(lua, move |_, args| {
                let args = args_of(f, &args)?;
                Ok(Start::Job(Job::new(move || f.call(&args, f.lua)), finish))
            })?
        } else {
            raising(lua, move |lua, args| {
                let args = args_of(f, &args)?;
                let out = f
                    .call(&args, f.lua)
                    .map_err(|e| mlua::Error::runtime(e.to_string()))?;
                to_lua(lua, out)
            })?
        };
        t.raw_set(f.lua, func)?;
    }
    lua.globals().raw_set("crypto", t)
}
