//! `kv`: a key-value store shared by every worker of one server, for state
//! that must not live in one VM's memory (rate-limit windows, request-id
//! counters, caches). Each worker has its own VM, so a module-level table
//! would give every worker its own copy; this store gives them one.
//!
//! Keys are strings; values are strings, numbers or booleans (encode tables
//! with json.encode). Keys may expire (`ttl` in seconds). The store lives in
//! the server process: it is shared by the workers of one `cove` process and
//! lost when the process exits.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

mod functions;
pub use functions::{KvArg, KvFn, KvOut, KvParam, FUNCTIONS};

/// Keys the whole store may hold; past this, setting a new key fails
/// (after expired keys were swept) rather than growing without bound.
pub const MAX_KEYS: usize = 100_000;
/// Longest key, in bytes.
pub const MAX_KEY: usize = 1024;
/// Largest string value, in bytes.
pub const MAX_VALUE: usize = 1024 * 1024;

const SHARDS: usize = 16;

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
}

struct Entry {
    value: KvValue,
    expires: Option<Instant>,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|t| t > now)
    }
}

/// The shared store; clones share the same data.
#[derive(Clone)]
pub struct Kv {
    inner: Arc<Inner>,
}

struct Inner {
    shards: Vec<Mutex<HashMap<String, Entry>>>,
    hasher: RandomState,
    /// Keys one shard may hold.
    per_shard: usize,
}

impl Default for Kv {
    fn default() -> Self {
        Kv::with_capacity(MAX_KEYS)
    }
}

impl std::fmt::Debug for Kv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kv").finish_non_exhaustive()
    }
}

fn check_key(key: &str) -> Result<(), KvError> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(KvError::BadKey);
    }
    Ok(())
}

fn expiry(ttl: Option<f64>, now: Instant) -> Result<Option<Instant>, KvError> {
    match ttl {
        None => Ok(None),
        Some(t) if t.is_finite() && t > 0.0 && t < 1e10 => {
            Ok(Some(now + Duration::from_secs_f64(t)))
        }
        Some(_) => Err(KvError::BadTtl),
    }
}

impl Kv {
    /// A store of at most about `keys` keys (spread over the shards).
    pub fn with_capacity(keys: usize) -> Kv {
        Kv {
            inner: Arc::new(Inner {
                shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
                hasher: RandomState::new(),
                per_shard: keys.div_ceil(SHARDS).max(1),
            }),
        }
    }

    fn shard(&self, key: &str) -> &Mutex<HashMap<String, Entry>> {
        let i = self.inner.hasher.hash_one(key) as usize % SHARDS;
        &self.inner.shards[i]
    }

    /// Room for one more key in `map` (the shard about to take it): sweeps
    /// that shard's expired keys when the store looks full.
    fn make_room(&self, map: &mut HashMap<String, Entry>, now: Instant) -> Result<(), KvError> {
        if map.len() < self.inner.per_shard {
            return Ok(());
        }
        map.retain(|_, e| e.live(now));
        if map.len() < self.inner.per_shard {
            Ok(())
        } else {
            Err(KvError::Full)
        }
    }

    /// Put `entry` under `key` in `map` (its shard), making room if the key is new.
    fn insert(
        &self,
        map: &mut HashMap<String, Entry>,
        key: &str,
        entry: Entry,
        now: Instant,
    ) -> Result<(), KvError> {
        if !map.contains_key(key) {
            self.make_room(map, now)?;
        }
        map.insert(key.to_string(), entry);
        Ok(())
    }

    /// `f` of the live entry under `key`, if any.
    fn read<T>(
        &self,
        key: &str,
        f: impl FnOnce(&Entry, Instant) -> Option<T>,
    ) -> Result<Option<T>, KvError> {
        check_key(key)?;
        let now = Instant::now();
        let map = self.shard(key).lock();
        Ok(map.get(key).filter(|e| e.live(now)).and_then(|e| f(e, now)))
    }

    pub fn get(&self, key: &str) -> Result<Option<KvValue>, KvError> {
        self.read(key, |e, _| Some(e.value.clone()))
    }

    /// Store `value` under `key`, replacing what was there.
    pub fn set(&self, key: &str, value: KvValue, ttl: Option<f64>) -> Result<(), KvError> {
        self.put(key, value, ttl, false).map(drop)
    }

    /// Store `value` only if `key` holds nothing; true if it was stored.
    pub fn add(&self, key: &str, value: KvValue, ttl: Option<f64>) -> Result<bool, KvError> {
        self.put(key, value, ttl, true)
    }

    fn put(
        &self,
        key: &str,
        value: KvValue,
        ttl: Option<f64>,
        only_new: bool,
    ) -> Result<bool, KvError> {
        check_key(key)?;
        if let KvValue::Str(s) = &value {
            if s.len() > MAX_VALUE {
                return Err(KvError::TooLarge);
            }
        }
        let now = Instant::now();
        let expires = expiry(ttl, now)?;
        let mut map = self.shard(key).lock();
        let present = map.get(key).is_some_and(|e| e.live(now));
        if present && only_new {
            return Ok(false);
        }
        self.insert(&mut map, key, Entry { value, expires }, now)?;
        Ok(true)
    }

    /// Add `by` to the integer under `key` (a missing key counts as 0 and
    /// takes `ttl`; an existing key keeps its expiry). Returns the new value.
    pub fn incr(&self, key: &str, by: i64, ttl: Option<f64>) -> Result<i64, KvError> {
        check_key(key)?;
        let now = Instant::now();
        let mut map = self.shard(key).lock();
        if let Some(e) = map.get_mut(key).filter(|e| e.live(now)) {
            let KvValue::Int(n) = e.value else {
                return Err(KvError::NotInteger(key.to_string()));
            };
            let n = n.checked_add(by).ok_or(KvError::Overflow)?;
            e.value = KvValue::Int(n);
            return Ok(n);
        }
        let expires = expiry(ttl, now)?;
        let entry = Entry {
            value: KvValue::Int(by),
            expires,
        };
        self.insert(&mut map, key, entry, now)?;
        Ok(by)
    }

    /// Remove `key`; true if it held a value.
    pub fn delete(&self, key: &str) -> Result<bool, KvError> {
        check_key(key)?;
        let now = Instant::now();
        let removed = self.shard(key).lock().remove(key);
        Ok(removed.is_some_and(|e| e.live(now)))
    }

    /// Seconds until `key` expires; `None` if it holds nothing or never
    /// expires.
    pub fn ttl(&self, key: &str) -> Result<Option<f64>, KvError> {
        self.read(key, |e, now| e.expires.map(|t| (t - now).as_secs_f64()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> KvValue {
        KvValue::Str(v.as_bytes().to_vec())
    }

    #[test]
    fn set_get_delete() {
        let kv = Kv::default();
        assert_eq!(kv.get("a").unwrap(), None);
        kv.set("a", s("1"), None).unwrap();
        assert_eq!(kv.get("a").unwrap(), Some(s("1")));
        kv.set("a", KvValue::Bool(true), None).unwrap();
        assert_eq!(kv.get("a").unwrap(), Some(KvValue::Bool(true)));
        assert!(kv.delete("a").unwrap());
        assert!(!kv.delete("a").unwrap());
        assert_eq!(kv.get("a").unwrap(), None);
    }

    #[test]
    fn clones_share_data() {
        let kv = Kv::default();
        let other = kv.clone();
        kv.set("k", KvValue::Int(7), None).unwrap();
        assert_eq!(other.get("k").unwrap(), Some(KvValue::Int(7)));
    }

    #[test]
    fn incr_counts_from_zero_and_keeps_the_first_ttl() {
        let kv = Kv::default();
        assert_eq!(kv.incr("n", 1, Some(60.0)).unwrap(), 1);
        assert_eq!(kv.incr("n", 2, Some(1.0)).unwrap(), 3);
        let left = kv.ttl("n").unwrap().unwrap();
        assert!(left > 50.0, "{left}");
        kv.set("s", s("x"), None).unwrap();
        assert_eq!(kv.incr("s", 1, None), Err(KvError::NotInteger("s".into())));
        kv.set("big", KvValue::Int(i64::MAX), None).unwrap();
        assert_eq!(kv.incr("big", 1, None), Err(KvError::Overflow));
    }

    #[test]
    fn expired_keys_are_gone() {
        let kv = Kv::default();
        kv.set("t", s("v"), Some(0.02)).unwrap();
        assert_eq!(kv.ttl("nothing").unwrap(), None);
        assert!(kv.ttl("t").unwrap().is_some());
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(kv.get("t").unwrap(), None);
        assert_eq!(kv.incr("t", 5, None).unwrap(), 5);
        assert_eq!(kv.ttl("t").unwrap(), None);
        assert_eq!(kv.get("t").unwrap(), Some(KvValue::Int(5)));
    }

    #[test]
    fn add_only_sets_missing_keys() {
        let kv = Kv::default();
        assert!(kv.add("once", s("a"), Some(10.0)).unwrap());
        assert!(!kv.add("once", s("b"), None).unwrap());
        assert_eq!(kv.get("once").unwrap(), Some(s("a")));
    }

    #[test]
    fn bad_input_is_refused() {
        let kv = Kv::default();
        assert_eq!(kv.get(""), Err(KvError::BadKey));
        assert_eq!(kv.get(&"k".repeat(MAX_KEY + 1)), Err(KvError::BadKey));
        assert_eq!(kv.set("k", s("v"), Some(-1.0)), Err(KvError::BadTtl));
        assert_eq!(kv.set("k", s("v"), Some(f64::NAN)), Err(KvError::BadTtl));
        let big = KvValue::Str(vec![b'x'; MAX_VALUE + 1]);
        assert_eq!(kv.set("k", big, None), Err(KvError::TooLarge));
    }

    #[test]
    fn a_full_store_refuses_new_keys_until_some_expire() {
        let kv = Kv::with_capacity(SHARDS * 2);
        let mut i = 0;
        // Fill until some shard is full: at most two keys each.
        let err = loop {
            match kv.set(&format!("k{i}"), KvValue::Int(i), Some(0.05)) {
                Ok(()) => i += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(err, KvError::Full);
        assert!((2..=SHARDS as i64 * 2).contains(&i), "{i}");
        // Existing keys can still be updated.
        kv.set("k0", KvValue::Int(1), Some(0.05)).unwrap();
        std::thread::sleep(Duration::from_millis(80));
        kv.set(&format!("k{i}"), KvValue::Int(0), None).unwrap();
    }

    #[test]
    fn workers_on_threads_share_one_counter() {
        let kv = Kv::default();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let kv = kv.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        kv.incr("hits", 1, None).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(kv.get("hits").unwrap(), Some(KvValue::Int(4000)));
    }
}
