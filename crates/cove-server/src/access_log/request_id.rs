//! Request ids: the client's `X-Request-ID` when it is sane, else one made
//! here.
//!
//! A made id is 24 hex digits: 48 bits chosen at random once per process,
//! then a 48-bit counter. Each thread takes counters in blocks from one
//! shared atomic, so making an id touches no shared cache line except
//! once per block, and ids stay unique across threads.

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use cove_core::Room;
use hyper::header::HeaderValue;

/// The longest client id accepted.
pub const MAX_LEN: usize = 128;

/// Counters a thread takes at a time.
const BLOCK: u64 = 1 << 16;

static NEXT_BLOCK: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// (prefix in hex, next counter, end of this thread's block).
    static IDS: Cell<([u8; 12], u64, u64)> = const { Cell::new(([0; 12], 0, 0)) };
}

/// The client's id, if it is 1..=128 bytes of visible ASCII without
/// quotes or backslashes (so it can go into a log line, a header and
/// JSON as it is).
pub fn from_header(value: Option<&HeaderValue>) -> Option<&str> {
    let bytes = value?.as_bytes();
    let sane = |b: &u8| matches!(b, 0x21..=0x7e) && !matches!(b, b'"' | b'\'' | b'\\');
    if bytes.is_empty() || bytes.len() > MAX_LEN || !bytes.iter().all(sane) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// A request's id: the client's or a made one.
#[derive(Debug, Clone)]
pub enum RequestId<'a> {
    Client(&'a str),
    Made(Made),
}

impl RequestId<'_> {
    /// Append the id. Neither kind needs escaping in either format: a
    /// client's id passed [`from_header`], a made one is hex.
    #[inline]
    pub(crate) fn write(&self, out: &mut Room<'_>) {
        match self {
            RequestId::Client(s) => out.put(s.as_bytes()),
            RequestId::Made(m) => m.write(out),
        }
    }
}

/// The id of a request with this `X-Request-ID` header (or none).
pub fn for_request(header: Option<&HeaderValue>) -> RequestId<'_> {
    match from_header(header) {
        Some(s) => RequestId::Client(s),
        None => RequestId::Made(generate()),
    }
}

/// A made id: the process's prefix, already in hex, and the counter, put
/// in hex only when written into a line (as text, through `from_utf8`, the
/// id cost ~230 instructions a request; measured).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Made {
    prefix: [u8; 12],
    n: u64,
}

impl Made {
    /// The 24 hex digits.
    pub fn hex(&self) -> [u8; 24] {
        let mut out = [0u8; 24];
        out[..12].copy_from_slice(&self.prefix);
        out[12..].copy_from_slice(&hex48(self.n));
        out
    }

    #[inline]
    fn write(&self, out: &mut Room<'_>) {
        out.put(&self.prefix);
        out.put(&hex48(self.n));
    }
}

impl fmt::Display for Made {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Hex digits only.
        f.write_str(std::str::from_utf8(&self.hex()).unwrap_or_default())
    }
}

impl fmt::Debug for Made {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Made({self})")
    }
}

/// A new id, unique in this process.
pub fn generate() -> Made {
    IDS.with(|ids| {
        let (mut prefix, mut next, mut end) = ids.get();
        if next == end {
            prefix = hex48(process_prefix());
            next = NEXT_BLOCK.fetch_add(1, Ordering::Relaxed) * BLOCK;
            end = next + BLOCK;
        }
        ids.set((prefix, next + 1, end));
        Made { prefix, n: next }
    })
}

/// Each byte's two hex digits.
static HEX2: [[u8; 2]; 256] = {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = [HEX[b >> 4], HEX[b & 15]];
        b += 1;
    }
    t
};

/// The low 48 bits of `n` as 12 hex digits, a byte at a time.
#[inline]
fn hex48(n: u64) -> [u8; 12] {
    let mut out = [0u8; 12];
    for (i, pair) in out.chunks_exact_mut(2).enumerate() {
        pair.copy_from_slice(&HEX2[(n >> (40 - 8 * i) & 0xff) as usize]);
    }
    out
}

/// Random per process, so ids from two processes (or a restart) differ.
fn process_prefix() -> u64 {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    *PREFIX.get_or_init(|| {
        let mut seed = [0u8; 8];
        match getrandom::getrandom(&mut seed) {
            Ok(()) => u64::from_le_bytes(seed),
            // No entropy source: the time and pid still differ per process.
            Err(_) => {
                let nanos = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                nanos ^ u64::from(std::process::id()).rotate_left(32)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn header(s: &[u8]) -> HeaderValue {
        HeaderValue::from_bytes(s).unwrap()
    }

    #[test]
    fn sane_client_ids_are_kept() {
        for ok in [
            "a",
            "f47ac10b-58cc-4372-a567-0e02b2c3d479",
            "req_1:2/3+4=",
            "~!#$%&()*",
        ] {
            assert_eq!(from_header(Some(&header(ok.as_bytes()))), Some(ok));
        }
        let longest = "x".repeat(MAX_LEN);
        assert!(from_header(Some(&header(longest.as_bytes()))).is_some());
    }

    #[test]
    fn bad_client_ids_are_refused() {
        assert_eq!(from_header(None), None);
        let long = "x".repeat(MAX_LEN + 1);
        let bad: [&[u8]; 8] = [
            b"",
            long.as_bytes(),
            b"has space",
            b"quote\"d",
            b"single'",
            b"back\\slash",
            b"tab\there",
            "ünï".as_bytes(),
        ];
        for b in bad {
            assert_eq!(from_header(Some(&header(b))), None, "{b:?}");
        }
        assert!(matches!(
            for_request(Some(&header(b"bad id"))),
            RequestId::Made(_)
        ));
        assert!(matches!(
            for_request(Some(&header(b"good"))),
            RequestId::Client("good")
        ));
    }

    #[test]
    fn made_ids_are_hex_and_unique_across_threads() {
        let threads: Vec<_> = (0..8)
            .map(|_| {
                std::thread::spawn(|| {
                    (0..(BLOCK as usize + 1000))
                        .map(|_| generate())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut seen = HashSet::new();
        for t in threads {
            for id in t.join().unwrap() {
                let s = id.to_string();
                assert_eq!(s.len(), 24);
                assert!(s.bytes().all(|b| b.is_ascii_hexdigit()));
                assert!(seen.insert(id), "duplicate {s}");
            }
        }
        // Every id of a process shares its prefix; a made id is also a sane
        // client id (a proxy in front may pass ours on).
        let a = generate();
        let b = generate();
        assert_eq!(a.hex()[..12], b.hex()[..12]);
        assert_ne!(a, b);
        assert!(from_header(Some(&header(&a.hex()))).is_some());
        let mut line = Vec::new();
        RequestId::Made(a).write(&mut Room::new(&mut line, 0));
        assert_eq!(line, a.hex());
    }

    #[test]
    fn hex48_is_the_low_48_bits() {
        for n in [0, 1, 0xab, 0x0123_4567_89ab, u64::MAX] {
            let want = format!("{:012x}", n & ((1 << 48) - 1));
            assert_eq!(hex48(n), want.as_bytes(), "{n:x}");
        }
    }
}
