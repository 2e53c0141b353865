//! The script-facing kv functions, declared once: both bindings register
//! every entry of [`FUNCTIONS`] under its name, converting each argument by
//! its [`KvParam`] and the result from [`KvOut`]. A binding either
//! [`call`](KvFn::call)s (blocking on a Redis reply) or
//! [`start`](KvFn::start)s, awaiting a [`KvCall::Pending`] reply while the
//! script is suspended.

use std::time::Duration;

use cove_core::CapError;

use crate::sig::Ty;

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
    /// What it returns, and one line for the docs (api/tables.rs).
    pub ret: Ty,
    pub doc: &'static str,
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

/// A value kv stores: a string, number or boolean.
pub const KV_VALUE: Ty = Ty::Union(&[Ty::Str, Ty::Num, Ty::Bool]);

pub static FUNCTIONS: &[KvFn] = &[
    KvFn {
        name: "get",
        ret: Ty::Opt(&KV_VALUE),
        doc: "the value stored under the key, or nil/null",
        params: &[KvParam::Key],
        op: |a| Ok(Op::Get(key(a))),
    },
    KvFn {
        name: "set",
        ret: Ty::Nil,
        doc: "store a value (string, number, boolean), with an optional ttl in seconds",
        params: &[KvParam::Key, KvParam::Value, KvParam::Ttl],
        op: |a| Ok(Op::Set(key(a), value(a)?, ttl(a, 2)?)),
    },
    KvFn {
        name: "add",
        ret: Ty::Bool,
        doc: "store a value only if the key is absent; whether it was stored",
        params: &[KvParam::Key, KvParam::Value, KvParam::Ttl],
        op: |a| Ok(Op::Add(key(a), value(a)?, ttl(a, 2)?)),
    },
    KvFn {
        name: "incr",
        ret: Ty::Int,
        doc: "add step (default 1) to an integer value (absent: 0) and return it",
        params: &[KvParam::Key, KvParam::Step, KvParam::Ttl],
        op: |a| Ok(Op::Incr(key(a), step(a), ttl(a, 2)?)),
    },
    KvFn {
        name: "delete",
        ret: Ty::Bool,
        doc: "remove the key; whether it was there",
        params: &[KvParam::Key],
        op: |a| Ok(Op::Delete(key(a))),
    },
    KvFn {
        name: "ttl",
        ret: Ty::Opt(&Ty::Num),
        doc: "seconds the key has left, or nil/null when absent or without expiry",
        params: &[KvParam::Key],
        op: |a| Ok(Op::Ttl(key(a))),
    },
];
