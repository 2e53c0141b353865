//! `kv`: a key-value store shared by every worker, for state that must not
//! live in one VM's memory (rate-limit windows, request-id counters,
//! caches). Each worker has its own VM, so a module-level table would give
//! every worker its own copy; this store gives them one.
//!
//! Keys are strings; values are strings, integers, floats or booleans
//! (encode tables with json.encode) and come back as the type they went in
//! as. Keys may expire (`ttl` in seconds, honoured to the millisecond).
//!
//! Two backends, with the same semantics for every function of
//! [`FUNCTIONS`]:
//! - [`Kv::local`] (the default): a sharded map in the server process,
//!   shared by the workers of one `cove` process and lost when it exits.
//!   It answers at once ([`KvCall::Done`]); it holds at most [`MAX_KEYS`].
//! - [`Kv::connect`]: a Redis database shared by every process that connects
//!   to it (`cove app.lua --kv redis://host:6379/0`). Its calls are futures
//!   ([`KvCall::Pending`]) driven on the process's I/O thread
//!   ([`cove_core::io`]), so a worker can serve other requests meanwhile. See
//!   `redis.rs` for the key namespace and value encoding.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

mod functions;
mod memory;
pub(crate) mod redis;
#[cfg(test)]
mod tests;

pub use functions::{KvArg, KvFn, KvOut, KvParam, FUNCTIONS, KV_VALUE};

use self::redis::RedisStore;
use memory::Memory;

/// Keys the local store may hold; past this, setting a new key fails
/// (after expired keys were swept) rather than growing without bound.
/// Redis is bounded by its own `maxmemory` instead.
pub const MAX_KEYS: usize = 100_000;
/// Longest key, in bytes.
pub const MAX_KEY: usize = 1024;
/// Largest string value, in bytes.
pub const MAX_VALUE: usize = 1024 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum KvValue {
    Str(Vec<u8>),
    Int(i64),
    Float(f64),
    Bool(bool),
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum KvError {
    #[error("key must be a non-empty string of at most {MAX_KEY} bytes")]
    BadKey,
    #[error("value must be a string, number or boolean (encode tables with json.encode)")]
    BadValue,
    #[error("string values are limited to {MAX_VALUE} bytes")]
    TooLarge,
    #[error("ttl must be a positive number of seconds")]
    BadTtl,
    #[error("value of {0:?} is not an integer")]
    NotInteger(String),
    #[error("integer overflow")]
    Overflow,
    #[error("store is full ({MAX_KEYS} keys); give keys a ttl or delete them")]
    Full,
    /// Redis could not be reached or did not answer in time; the caller
    /// decides whether to fail open. `url` carries no password.
    #[error("Redis unavailable at {url}: {reason}")]
    Unavailable { url: String, reason: String },
    /// Something other than Cove wrote the key (no type tag we know).
    #[error("value of {0:?} was not written by cove's kv (unknown encoding)")]
    Foreign(String),
}

impl KvError {
    /// Stable machine-readable code (`kv.unavailable`, …).
    pub fn code(&self) -> &'static str {
        match self {
            KvError::BadKey => "kv.bad_key",
            KvError::BadValue => "kv.bad_value",
            KvError::TooLarge => "kv.too_large",
            KvError::BadTtl => "kv.bad_ttl",
            KvError::NotInteger(_) => "kv.not_integer",
            KvError::Overflow => "kv.overflow",
            KvError::Full => "kv.full",
            KvError::Unavailable { .. } => "kv.unavailable",
            KvError::Foreign(_) => "kv.foreign",
        }
    }
}

/// One call, its arguments converted, as a backend runs it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op<K> {
    Get(K),
    Set(K, KvValue, Option<Duration>),
    /// Set only if absent.
    Add(K, KvValue, Option<Duration>),
    /// Add a step; the ttl applies only if this creates the key.
    Incr(K, i64, Option<Duration>),
    Delete(K),
    Ttl(K),
}

impl<K: AsRef<str>> Op<K> {
    /// The operation's name, for `cove_kv_operations_total`.
    fn name(&self) -> &'static str {
        match self {
            Op::Get(_) => "get",
            Op::Set(..) => "set",
            Op::Add(..) => "add",
            Op::Incr(..) => "incr",
            Op::Delete(_) => "delete",
            Op::Ttl(_) => "ttl",
        }
    }

    fn key(&self) -> &str {
        match self {
            Op::Get(k) | Op::Delete(k) | Op::Ttl(k) => k.as_ref(),
            Op::Set(k, ..) | Op::Add(k, ..) | Op::Incr(k, ..) => k.as_ref(),
        }
    }

    /// The limits both backends hold to, checked before any work.
    fn check(&self) -> Result<(), KvError> {
        let key = self.key();
        if key.is_empty() || key.len() > MAX_KEY {
            return Err(KvError::BadKey);
        }
        if let Op::Set(_, KvValue::Str(s), _) | Op::Add(_, KvValue::Str(s), _) = self {
            if s.len() > MAX_VALUE {
                return Err(KvError::TooLarge);
            }
        }
        Ok(())
    }
}

/// A ttl in seconds as a duration; `None` never expires.
pub(crate) fn ttl_of(ttl: Option<f64>) -> Result<Option<Duration>, KvError> {
    match ttl {
        None => Ok(None),
        Some(t) if t.is_finite() && t > 0.0 && t < 1e10 => Ok(Some(Duration::from_secs_f64(t))),
        Some(_) => Err(KvError::BadTtl),
    }
}

/// A reply still on its way (from Redis).
pub type KvFuture<E = String> = Pin<Box<dyn Future<Output = Result<KvOut, E>> + Send>>;

/// A started call: answered already (the local store, or refused input),
/// or a future to await — on the worker's event loop, or blocked on where
/// the script cannot suspend. Errors are `kv.<name>: <why>` strings from
/// [`KvFn::start`].
pub enum KvCall<E = String> {
    Done(Result<KvOut, E>),
    Pending(KvFuture<E>),
}

/// The shared store; clones share the same data (and Redis connection).
#[derive(Clone)]
pub struct Kv {
    store: Store,
}

#[derive(Clone)]
enum Store {
    Memory(Arc<Memory>),
    Redis(Arc<RedisStore>),
}

impl Default for Kv {
    fn default() -> Self {
        Kv::local()
    }
}

impl std::fmt::Debug for Kv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Kv");
        d.field("backend", &self.backend());
        if let Store::Redis(r) = &self.store {
            d.field("url", &r.url());
        }
        d.finish_non_exhaustive()
    }
}

impl Kv {
    /// A store in this process, shared by its workers.
    pub fn local() -> Kv {
        Kv::with_capacity(MAX_KEYS)
    }

    /// A local store of at most about `keys` keys.
    pub fn with_capacity(keys: usize) -> Kv {
        Kv {
            store: Store::Memory(Arc::new(Memory::new(keys))),
        }
    }

    /// The Redis database at `url` (`redis://[:password@]host[:port][/db]`),
    /// shared with every process connected to it. Connects and PINGs now,
    /// so a wrong URL or a stopped server fails at start; later outages
    /// fail each call with [`KvError::Unavailable`] until Redis is back
    /// (the connection is re-established by itself).
    pub fn connect(url: &str) -> Result<Kv, String> {
        Ok(Kv {
            store: Store::Redis(Arc::new(RedisStore::connect(url)?)),
        })
    }

    /// `"memory"` or `"redis"`, for logs and `--help` texts.
    pub fn backend(&self) -> &'static str {
        match self.store {
            Store::Memory(_) => "memory",
            Store::Redis(_) => "redis",
        }
    }

    /// Whether every call answers at once ([`KvCall::Done`]): bindings
    /// then register plain functions, with no way to suspend.
    pub fn is_local(&self) -> bool {
        matches!(self.store, Store::Memory(_))
    }

    /// Start `op`: the local store runs it now, Redis sends it.
    pub(crate) fn start(&self, op: Op<&str>) -> KvCall<KvError> {
        if let Err(e) = op.check() {
            return KvCall::Done(Err(e));
        }
        if cove_core::telemetry::on() {
            count_op(op.name());
        }
        match &self.store {
            Store::Memory(m) => KvCall::Done(m.exec(op)),
            Store::Redis(r) => KvCall::Pending(r.start(op)),
        }
    }

    /// Run `op` to its end, blocking this thread on a Redis reply.
    fn run(&self, op: Op<&str>) -> Result<KvOut, KvError> {
        match self.start(op) {
            KvCall::Done(out) => out,
            KvCall::Pending(reply) => cove_core::block_on(reply),
        }
    }

    // The typed Rust API: each blocks on a Redis reply (from a script,
    // start the call through `FUNCTIONS` instead).

    pub fn get(&self, key: &str) -> Result<Option<KvValue>, KvError> {
        match self.run(Op::Get(key))? {
            KvOut::Value(v) => Ok(v),
            out => unreachable!("kv get gave {out:?}"),
        }
    }

    /// Store `value` under `key`, replacing what was there (and its ttl).
    pub fn set(&self, key: &str, value: KvValue, ttl: Option<f64>) -> Result<(), KvError> {
        self.run(Op::Set(key, value, ttl_of(ttl)?)).map(drop)
    }

    /// Store `value` only if `key` holds nothing; true if it was stored.
    pub fn add(&self, key: &str, value: KvValue, ttl: Option<f64>) -> Result<bool, KvError> {
        match self.run(Op::Add(key, value, ttl_of(ttl)?))? {
            KvOut::Bool(b) => Ok(b),
            out => unreachable!("kv add gave {out:?}"),
        }
    }

    /// Add `by` to the integer under `key` (a missing key counts as 0 and
    /// takes `ttl`; an existing key keeps its expiry). Returns the new value.
    pub fn incr(&self, key: &str, by: i64, ttl: Option<f64>) -> Result<i64, KvError> {
        match self.run(Op::Incr(key, by, ttl_of(ttl)?))? {
            KvOut::Int(n) => Ok(n),
            out => unreachable!("kv incr gave {out:?}"),
        }
    }

    /// Remove `key`; true if it held a value.
    pub fn delete(&self, key: &str) -> Result<bool, KvError> {
        match self.run(Op::Delete(key))? {
            KvOut::Bool(b) => Ok(b),
            out => unreachable!("kv delete gave {out:?}"),
        }
    }

    /// Seconds until `key` expires; `None` if it holds nothing or never
    /// expires.
    pub fn ttl(&self, key: &str) -> Result<Option<f64>, KvError> {
        match self.run(Op::Ttl(key))? {
            KvOut::Seconds(s) => Ok(s),
            out => unreachable!("kv ttl gave {out:?}"),
        }
    }
}

/// One kv operation, counted by name (`--metrics`).
#[cold]
fn count_op(op: &'static str) {
    metrics::counter!("cove_kv_operations_total", "op" => op).increment(1);
}
