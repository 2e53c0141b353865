//! crypto's functions over [`CapValue`]s: data is text or bytes, a count a
//! number; results map kind by kind (crypto/mod.rs `Out`).

use std::borrow::Cow;

use cove_core::CapError;

use super::{blocking, CapValue, Runtime, Scope, Started};
use crate::crypto::{Arg, ArgValue, CryptoFn, CryptoResult, Out};

fn bad_arg(f: &CryptoFn, rt: Runtime, at: usize, kind: Arg, v: &CapValue) -> CapError {
    let (name, wanted) = match (rt, kind) {
        (Runtime::Lua, Arg::Bytes) => (f.lua, "a string"),
        (Runtime::Js, Arg::Bytes) => (f.js, "a string or bytes (an ArrayBuffer or a Uint8Array)"),
        (Runtime::Lua, Arg::Int) => (f.lua, "a number"),
        (Runtime::Js, Arg::Int) => (f.js, "a number"),
    };
    CapError::new(
        "crypto.argument",
        format!(
            "crypto.{name}: argument {} must be {wanted}, got {}",
            at + 1,
            v.type_name(rt)
        ),
    )
}

fn args_of(f: &CryptoFn, rt: Runtime, args: &[CapValue]) -> Result<Vec<ArgValue>, CapError> {
    f.args
        .iter()
        .enumerate()
        .map(|(i, &kind)| {
            let v = args.get(i).unwrap_or(&CapValue::Nothing);
            match (kind, v) {
                (Arg::Bytes, CapValue::Str(b) | CapValue::Bytes(b)) => {
                    Ok(ArgValue::Bytes(b.clone()))
                }
                (Arg::Int, CapValue::Int(n)) => Ok(ArgValue::Int(*n)),
                (Arg::Int, CapValue::Num(n)) if n.fract() == 0.0 => Ok(ArgValue::Int(*n as i64)),
                // A fractional count is out of range (JS: anything not a
                // whole number, like Hull's RangeError).
                (Arg::Int, CapValue::Num(_)) => Ok(ArgValue::Int(0)),
                (Arg::Int, _) if rt == Runtime::Js => Ok(ArgValue::Int(0)),
                _ => Err(bad_arg(f, rt, i, kind, v)),
            }
        })
        .collect()
}

fn value_of(out: Out) -> CapValue {
    match out {
        Out::Str(s) => CapValue::Str(s.into_bytes()),
        Out::Bytes(b) => CapValue::Bytes(b),
        Out::Text(Some(b)) => CapValue::Str(b),
        Out::Text(None) => CapValue::Null,
        Out::Bool(b) => CapValue::Bool(b),
        Out::KeyPair { public, secret } => CapValue::Results(vec![
            ("publicKey", CapValue::Str(public.into_bytes())),
            ("secretKey", CapValue::Str(secret.into_bytes())),
        ]),
    }
}

/// A count out of range is `crypto.range` (JS: a `RangeError`); other bad
/// input `crypto.input`.
fn result(f: &CryptoFn, out: CryptoResult) -> Result<CapValue, CapError> {
    out.map(value_of).map_err(|e| {
        let code = if f.args.contains(&Arg::Int) {
            "crypto.range"
        } else {
            e.code()
        };
        CapError::new(code, e.0)
    })
}

pub(super) fn start(
    f: &'static CryptoFn,
    scope: &Scope,
    called_as: Cow<'static, str>,
    args: &[CapValue],
) -> Result<Started, CapError> {
    let args = args_of(f, scope.runtime, args)?;
    let js = scope.runtime == Runtime::Js;
    let run = move || {
        let out = f.call(&args, &called_as);
        // Hull's JS answers some malformed input instead of raising.
        let out = if js {
            out.or_else(|e| f.js_fallback(e))
        } else {
            out
        };
        (f, out)
    };
    if f.slow {
        Ok(blocking(run, |(f, out)| result(f, out)))
    } else {
        let (f, out) = run();
        result(f, out).map(Started::Done)
    }
}
