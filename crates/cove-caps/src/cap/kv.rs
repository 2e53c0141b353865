//! kv's functions over [`CapValue`]s: keys are strings, values strings,
//! numbers or booleans; the local store answers at once, Redis with a job.

use cove_core::{CapError, Job};

use super::{CapValue, Runtime, Scope, Started};
use crate::kv::{KvArg, KvCall, KvFn, KvOut, KvParam, KvValue};

/// Below 2^53 in size: a whole number that stays an integer.
fn whole(n: f64) -> bool {
    n.fract() == 0.0 && n.abs() < 9e15
}

fn arg_of(f: &KvFn, rt: Runtime, param: KvParam, v: &CapValue) -> Result<KvArg, CapError> {
    let arg = match (param, v) {
        (KvParam::Key, CapValue::Str(s)) => String::from_utf8(s.clone()).ok().map(KvArg::Key),
        (KvParam::Value, CapValue::Str(s)) => Some(KvArg::Value(KvValue::Str(s.clone()))),
        (KvParam::Value, CapValue::Int(n)) => Some(KvArg::Value(KvValue::Int(*n))),
        // JS has no integers: a whole number comes back the same as one.
        (KvParam::Value, CapValue::Num(n)) if rt == Runtime::Js && whole(*n) => {
            Some(KvArg::Value(KvValue::Int(*n as i64)))
        }
        (KvParam::Value, CapValue::Num(n)) => Some(KvArg::Value(KvValue::Float(*n))),
        (KvParam::Value, CapValue::Bool(b)) => Some(KvArg::Value(KvValue::Bool(*b))),
        (KvParam::Step, v) if v.is_absent() => Some(KvArg::Step(None)),
        (KvParam::Step, CapValue::Int(n)) => Some(KvArg::Step(Some(*n))),
        (KvParam::Step, CapValue::Num(n)) if whole(*n) => Some(KvArg::Step(Some(*n as i64))),
        (KvParam::Ttl, v) if v.is_absent() => Some(KvArg::Ttl(None)),
        (KvParam::Ttl, CapValue::Int(n)) => Some(KvArg::Ttl(Some(*n as f64))),
        (KvParam::Ttl, CapValue::Num(n)) => Some(KvArg::Ttl(Some(*n))),
        _ => None,
    };
    arg.ok_or_else(|| CapError::new("kv.argument", f.bad_arg(param)))
}

fn value_of(out: KvOut) -> CapValue {
    match out {
        KvOut::Nothing => CapValue::Nothing,
        KvOut::Value(None) | KvOut::Seconds(None) => CapValue::Null,
        KvOut::Value(Some(KvValue::Str(s))) => CapValue::Str(s),
        KvOut::Value(Some(KvValue::Int(n))) | KvOut::Int(n) => CapValue::Int(n),
        KvOut::Value(Some(KvValue::Float(n))) | KvOut::Seconds(Some(n)) => CapValue::Num(n),
        KvOut::Value(Some(KvValue::Bool(b))) | KvOut::Bool(b) => CapValue::Bool(b),
    }
}

pub(super) fn start(f: &KvFn, scope: &Scope, args: &[CapValue]) -> Result<Started, CapError> {
    let args = f
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            arg_of(
                f,
                scope.runtime,
                *p,
                args.get(i).unwrap_or(&CapValue::Nothing),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    match f.start(scope.kv, &args) {
        KvCall::Done(out) => out.map(|o| Started::Done(value_of(o))),
        KvCall::Pending(reply) => Ok(Started::Job(Job::future(async move {
            reply.await.map(value_of)
        }))),
    }
}
