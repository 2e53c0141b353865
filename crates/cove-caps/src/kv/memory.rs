//! The local backend: a map split into shards, each behind its own lock,
//! so workers touching different keys rarely wait for each other. Expired
//! entries are dropped lazily: skipped on read, swept from a shard when it
//! looks full.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::{KvError, KvOut, KvValue, Op};

pub(super) const SHARDS: usize = 16;

struct Entry {
    value: KvValue,
    expires: Option<Instant>,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|t| t > now)
    }
}

type Shard = HashMap<String, Entry>;

pub(super) struct Memory {
    shards: Vec<Mutex<Shard>>,
    hasher: RandomState,
    /// Keys one shard may hold.
    per_shard: usize,
}

impl Memory {
    /// A store of at most about `keys` keys (spread over the shards).
    pub(super) fn new(keys: usize) -> Memory {
        Memory {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            hasher: RandomState::new(),
            per_shard: keys.div_ceil(SHARDS).max(1),
        }
    }

    /// Run `op` (already checked against the limits).
    pub(super) fn exec(&self, op: Op<&str>) -> Result<KvOut, KvError> {
        let now = Instant::now();
        Ok(match op {
            Op::Get(key) => KvOut::Value(self.read(key, now, |e, _| Some(e.value.clone()))),
            Op::Set(key, value, ttl) => {
                self.put(key, value, ttl, false, now)?;
                KvOut::Nothing
            }
            Op::Add(key, value, ttl) => KvOut::Bool(self.put(key, value, ttl, true, now)?),
            Op::Incr(key, by, ttl) => KvOut::Int(self.incr(key, by, ttl, now)?),
            Op::Delete(key) => {
                let removed = self.shard(key).lock().remove(key);
                KvOut::Bool(removed.is_some_and(|e| e.live(now)))
            }
            Op::Ttl(key) => KvOut::Seconds(self.read(key, now, |e, now| {
                e.expires.map(|t| (t - now).as_secs_f64())
            })),
        })
    }

    fn shard(&self, key: &str) -> &Mutex<Shard> {
        let i = self.hasher.hash_one(key) as usize % SHARDS;
        &self.shards[i]
    }

    /// Room for one more key in `map` (the shard about to take it): sweeps
    /// that shard's expired keys when the store looks full.
    fn make_room(&self, map: &mut Shard, now: Instant) -> Result<(), KvError> {
        if map.len() < self.per_shard {
            return Ok(());
        }
        map.retain(|_, e| e.live(now));
        if map.len() < self.per_shard {
            Ok(())
        } else {
            Err(KvError::Full)
        }
    }

    /// Put `entry` under `key` in `map` (its shard), making room if the key is new.
    fn insert(
        &self,
        map: &mut Shard,
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
        now: Instant,
        f: impl FnOnce(&Entry, Instant) -> Option<T>,
    ) -> Option<T> {
        let map = self.shard(key).lock();
        map.get(key).filter(|e| e.live(now)).and_then(|e| f(e, now))
    }

    fn put(
        &self,
        key: &str,
        value: KvValue,
        ttl: Option<Duration>,
        only_new: bool,
        now: Instant,
    ) -> Result<bool, KvError> {
        let mut map = self.shard(key).lock();
        let present = map.get(key).is_some_and(|e| e.live(now));
        if present && only_new {
            return Ok(false);
        }
        let expires = ttl.map(|t| now + t);
        self.insert(&mut map, key, Entry { value, expires }, now)?;
        Ok(true)
    }

    fn incr(
        &self,
        key: &str,
        by: i64,
        ttl: Option<Duration>,
        now: Instant,
    ) -> Result<i64, KvError> {
        let mut map = self.shard(key).lock();
        if let Some(e) = map.get_mut(key).filter(|e| e.live(now)) {
            let KvValue::Int(n) = e.value else {
                return Err(KvError::NotInteger(key.to_string()));
            };
            let n = n.checked_add(by).ok_or(KvError::Overflow)?;
            e.value = KvValue::Int(n);
            return Ok(n);
        }
        let entry = Entry {
            value: KvValue::Int(by),
            expires: ttl.map(|t| now + t),
        };
        self.insert(&mut map, key, entry, now)?;
        Ok(by)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Kv;
    use super::*;

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
}
