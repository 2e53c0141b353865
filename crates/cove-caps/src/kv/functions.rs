//! The script-facing kv functions, declared once: both bindings register
//! every entry of [`FUNCTIONS`] under its name, converting each argument by
//! its [`KvParam`] and the result from [`KvOut`].

use super::{Kv, KvError, KvValue};

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
    run: fn(&Kv, &[KvArg]) -> Result<KvOut, KvError>,
}

impl KvFn {
    /// Run with arguments converted in `params` order. Errors read
    /// `kv.<name>: <why>`.
    pub fn call(&self, kv: &Kv, args: &[KvArg]) -> Result<KvOut, String> {
        (self.run)(kv, args).map_err(|e| format!("kv.{}: {e}", self.name))
    }

    /// The message for an argument of the wrong kind.
    pub fn bad_arg(&self, param: KvParam) -> String {
        let e = match param {
            KvParam::Key => KvError::BadKey,
            KvParam::Value => KvError::BadValue,
            KvParam::Step => return format!("kv.{}: step must be an integer", self.name),
            KvParam::Ttl => KvError::BadTtl,
        };
        format!("kv.{}: {e}", self.name)
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

fn ttl(args: &[KvArg], at: usize) -> Option<f64> {
    match args.get(at) {
        Some(KvArg::Ttl(t)) => *t,
        _ => None,
    }
}

pub static FUNCTIONS: &[KvFn] = &[
    KvFn {
        name: "get",
        params: &[KvParam::Key],
        run: |kv, a| kv.get(key(a)).map(KvOut::Value),
    },
    KvFn {
        name: "set",
        params: &[KvParam::Key, KvParam::Value, KvParam::Ttl],
        run: |kv, a| {
            kv.set(key(a), value(a)?, ttl(a, 2))
                .map(|()| KvOut::Nothing)
        },
    },
    KvFn {
        name: "add",
        params: &[KvParam::Key, KvParam::Value, KvParam::Ttl],
        run: |kv, a| kv.add(key(a), value(a)?, ttl(a, 2)).map(KvOut::Bool),
    },
    KvFn {
        name: "incr",
        params: &[KvParam::Key, KvParam::Step, KvParam::Ttl],
        run: |kv, a| {
            let by = match a.get(1) {
                Some(KvArg::Step(Some(n))) => *n,
                _ => 1,
            };
            kv.incr(key(a), by, ttl(a, 2)).map(KvOut::Int)
        },
    },
    KvFn {
        name: "delete",
        params: &[KvParam::Key],
        run: |kv, a| kv.delete(key(a)).map(KvOut::Bool),
    },
    KvFn {
        name: "ttl",
        params: &[KvParam::Key],
        run: |kv, a| kv.ttl(key(a)).map(KvOut::Seconds),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str) -> &'static KvFn {
        FUNCTIONS.iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn calls_run_through_the_table() {
        let kv = Kv::default();
        let k = || KvArg::Key("c".into());
        let out = f("incr").call(&kv, &[k(), KvArg::Step(None), KvArg::Ttl(None)]);
        assert_eq!(out, Ok(KvOut::Int(1)));
        let out = f("incr").call(&kv, &[k(), KvArg::Step(Some(4)), KvArg::Ttl(None)]);
        assert_eq!(out, Ok(KvOut::Int(5)));
        assert_eq!(
            f("get").call(&kv, &[k()]),
            Ok(KvOut::Value(Some(KvValue::Int(5))))
        );
        let err = f("get")
            .call(&kv, &[KvArg::Key(String::new())])
            .unwrap_err();
        assert!(err.starts_with("kv.get: key must be"), "{err}");
        assert_eq!(
            f("set").bad_arg(KvParam::Value),
            "kv.set: value must be a string, number or boolean (encode tables with json.encode)"
        );
    }
}
