//! The script-facing kv functions, declared once: both bindings register
//! every entry of [`FUNCTIONS`] under its name, converting each argument by
//! its [`KvParam`] and the result from [`KvOut`]. A binding either
//! [`call`](KvFn::call)s (blocking on a Redis reply) or
//! [`start`](KvFn::start)s, awaiting a [`KvCall::Pending`] reply while the
//! script is suspended.

use std::time::Duration;

use cove_core::CapError;

use super::{ttl_of, Kv, KvCall, KvError, KvValue, Op};

/// What an argument must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvParam {
    /// A string key.
    Key,
    /// A string, number or boolean.
    Value,
    /// An optional integer (the `incr` step; default 1).
    Step,
    /// An optional ttl in seconds.
    Ttl,
}

/// A converted argument.
#[derive(Debug, Clone, PartialEq)]
pub enum KvArg {
    Key(String),
    Value(KvValue),
    Step(Option<i64>),
    Ttl(Option<f64>),
}

/// A result, for the binding to convert.
#[derive(Debug, Clone, PartialEq)]
pub enum KvOut {
    Nothing,
    Value(Option<KvValue>),
    Bool(bool),
    Int(i64),
    Seconds(Option<f64>),
}

pub struct KvFn {
    pub name: &'static str,
    pub params: &'static [KvParam],
    op: for<'a> fn(&'a [KvArg]) -> Result<Op<&'a str>, KvError>,
}

/// `kv.<name>: <why>`, as scripts see it, with its code.
fn message(name: &str, e: &KvError) -> CapError {
    CapError::new(e.code(), format!("kv.{name}: {e}"))
}

impl KvFn {
    /// Run with arguments converted in `params` order, blocking on a Redis
    /// reply. Errors read `kv.<name>: <why>`.
    pub fn call(&self, kv: &Kv, args: &[KvArg]) -> Result<KvOut, CapError> {
        match self.start(kv, args) {
            KvCall::Done(out) => out,
            KvCall::Pending(reply) => cove_core::block_on(reply),
        }
    }

    /// Start the call: the local store answers now; a Redis command is on
    /// its way when this returns, its reply a future that needs no runtime
    /// of the caller's.
    pub fn start(&self, kv: &Kv, args: &[KvArg]) -> KvCall<CapError> {
        let name = self.name;
        let started = match (self.op)(args) {
            Ok(op) => kv.start(op),
            Err(e) => KvCall::Done(Err(e)),
        };
        match started {
            KvCall::Done(out) => KvCall::Done(out.map_err(|e| message(name, &e))),
            KvCall::Pending(reply) => KvCall::Pending(Box::pin(async move {
                reply.await.map_err(|e| message(name, &e))
            })),
        }
    }

    /// The message for an argument of the wrong kind.
    pub fn bad_arg(&self, param: KvParam) -> String {
        let e = match param {
            KvParam::Key => KvError::BadKey,
            KvParam::Value => KvError::BadValue,
            KvParam::Step => return format!("kv.{}: step must be an integer", self.name),
            KvParam::Ttl => KvError::BadTtl,
        };
        message(self.name, &e).message
    }
}

fn key(args: &[KvArg]) -> &str {
    match args.first() {
        Some(KvArg::Key(k)) => k,
        _ => "",
    }
}

fn value(args: &[KvArg]) -> Result<KvValue, KvError> {
    match args.get(1) {
        Some(KvArg::Value(v)) => Ok(v.clone()),
        _ => Err(KvError::BadValue),
    }
}

fn ttl(args: &[KvArg], at: usize) -> Result<Option<Duration>, KvError> {
    match args.get(at) {
        Some(KvArg::Ttl(t)) => ttl_of(*t),
        _ => Ok(None),
    }
}

fn step(args: &[KvArg]) -> i64 {
    match args.get(1) {
        Some(KvArg::Step(Some(n))) => *n,
        _ => 1,
    }
}

pub static FUNCTIONS: &[KvFn] = &[
    KvFn {
        name: "get",
        params: &[KvParam::Key],
        op: |a| Ok(Op::Get(key(a))),
    },
    KvFn {
        name: "set",
        params: &[KvParam::Key, KvParam::Value, KvParam::Ttl],
        op: |a| Ok(Op::Set(key(a), value(a)?, ttl(a, 2)?)),
    },
    KvFn {
        name: "add",
        params: &[KvParam::Key, KvParam::Value, KvParam::Ttl],
        op: |a| Ok(Op::Add(key(a), value(a)?, ttl(a, 2)?)),
    },
    KvFn {
        name: "incr",
        params: &[KvParam::Key, KvParam::Step, KvParam::Ttl],
        op: |a| Ok(Op::Incr(key(a), step(a), ttl(a, 2)?)),
    },
    KvFn {
        name: "delete",
        params: &[KvParam::Key],
        op: |a| Ok(Op::Delete(key(a))),
    },
    KvFn {
        name: "ttl",
        params: &[KvParam::Key],
        op: |a| Ok(Op::Ttl(key(a))),
    },
];
