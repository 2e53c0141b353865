//! Compressed bodies kept per worker, so a file is compressed once per
//! worker rather than once per request. Bounded in bytes; the oldest
//! entries go first. An entry belongs to one version of a file (its ETag),
//! so an edited file is compressed again.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

use super::encoding::Encoding;

type Key = (String, Encoding);

struct Entry {
    etag: String,
    /// `None`: compression did not make it smaller; send it as it is.
    body: Option<Bytes>,
    /// Matches the entry's place in `order`.
    seq: u64,
}

pub(super) struct Cache {
    budget: usize,
    used: usize,
    seq: u64,
    entries: HashMap<Key, Entry>,
    /// Insertion order; stale positions (replaced entries) are skipped.
    order: VecDeque<(Key, u64)>,
}

fn cost(key: &Key, entry: &Entry) -> usize {
    key.0.len() + entry.etag.len() + entry.body.as_ref().map_or(0, Bytes::len) + 64
}

impl Cache {
    pub fn new(budget: usize) -> Cache {
        Cache {
            budget,
            used: 0,
            seq: 0,
            entries: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    /// The cached result for this version of `rel`: `Some(None)` means
    /// "not worth compressing".
    pub fn get(&self, rel: &str, enc: Encoding, etag: &str) -> Option<Option<Bytes>> {
        let entry = self.entries.get(&(rel.to_string(), enc))?;
        (entry.etag == etag).then(|| entry.body.clone())
    }

    pub fn put(&mut self, rel: &str, enc: Encoding, etag: &str, body: Option<Bytes>) {
        let key = (rel.to_string(), enc);
        self.seq += 1;
        let entry = Entry {
            etag: etag.to_string(),
            body,
            seq: self.seq,
        };
        let size = cost(&key, &entry);
        if size > self.budget / 4 {
            return;
        }
        if let Some(old) = self.entries.remove(&key) {
            self.used -= cost(&key, &old);
        }
        while self.used + size > self.budget {
            let Some((old_key, seq)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&old_key).is_some_and(|e| e.seq == seq) {
                if let Some(old) = self.entries.remove(&old_key) {
                    self.used -= cost(&old_key, &old);
                }
            }
        }
        self.used += size;
        if self.order.len() > 2 * self.entries.len() + 16 {
            // Replaced entries left stale positions behind: drop them.
            let entries = &self.entries;
            self.order
                .retain(|(k, seq)| entries.get(k).is_some_and(|e| e.seq == *seq));
        }
        self.order.push_back((key.clone(), entry.seq));
        self.entries.insert(key, entry);
    }

    #[cfg(test)]
    fn used(&self) -> usize {
        self.used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(n: usize) -> Option<Bytes> {
        Some(Bytes::from(vec![b'x'; n]))
    }

    #[test]
    fn keeps_one_version_per_file() {
        let mut c = Cache::new(100_000);
        c.put("static/a.css", Encoding::Br, "W/\"1\"", body(10));
        assert_eq!(
            c.get("static/a.css", Encoding::Br, "W/\"1\"")
                .unwrap()
                .unwrap()
                .len(),
            10
        );
        assert!(c.get("static/a.css", Encoding::Gzip, "W/\"1\"").is_none());
        assert!(c.get("static/a.css", Encoding::Br, "W/\"2\"").is_none());
        c.put("static/a.css", Encoding::Br, "W/\"2\"", None);
        assert_eq!(c.get("static/a.css", Encoding::Br, "W/\"2\""), Some(None));
        assert!(c.get("static/a.css", Encoding::Br, "W/\"1\"").is_none());
    }

    #[test]
    fn stays_within_its_budget_dropping_the_oldest() {
        let mut c = Cache::new(10_000);
        for i in 0..20 {
            c.put(&format!("static/{i}"), Encoding::Gzip, "e", body(1_000));
            assert!(c.used() <= 10_000);
        }
        assert!(c.get("static/0", Encoding::Gzip, "e").is_none());
        assert!(c.get("static/19", Encoding::Gzip, "e").is_some());
        // Replacing an entry many times does not leak budget.
        for _ in 0..50 {
            c.put("static/19", Encoding::Gzip, "e", body(1_000));
        }
        assert!(c.used() <= 10_000);
        assert!(c.order.len() <= 2 * c.entries.len() + 17);
        assert!(c.get("static/18", Encoding::Gzip, "e").is_some());
    }

    #[test]
    fn a_body_over_a_quarter_of_the_budget_is_not_kept() {
        let mut c = Cache::new(10_000);
        c.put("static/big", Encoding::Br, "e", body(5_000));
        assert!(c.get("static/big", Encoding::Br, "e").is_none());
        assert_eq!(c.used(), 0);
    }
}
