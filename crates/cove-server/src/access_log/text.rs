//! The pieces a line is made of: numbers, IP addresses and escaped text,
//! written straight into the line's buffer.
//!
//! Most of what gets escaped (paths, user agents) needs no escaping, so
//! the scan looks at eight bytes at a time and copies clean runs whole.

use std::net::IpAddr;
use std::time::Duration;

use cove_core::Room;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Nonzero if a byte of `x` is zero (exact as a whole, not per byte).
#[inline(always)]
fn zero_byte(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Nonzero if a byte of `x` equals `b`.
#[inline(always)]
fn has(x: u64, b: u8) -> u64 {
    zero_byte(x ^ (ONES * b as u64))
}

/// Where the bytes escaped in the combined format and in JSON differ.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    /// nginx's log escaping: `"`, `\`, controls, DEL and non-ASCII as `\xHH`.
    Quoted,
    /// As `Quoted`, and a space too: a bare `key=value` token.
    Token,
    /// JSON string contents (the input is UTF-8 already).
    Json,
}

/// Which bytes each kind escapes, by byte value.
const fn table(how: Escape) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        t[b] = byte < 0x20
            || byte == b'"'
            || byte == b'\\'
            || match how {
                Escape::Json => false,
                Escape::Quoted => byte >= 0x7f,
                Escape::Token => byte >= 0x7f || byte == b' ',
            };
        b += 1;
    }
    t
}

static QUOTED: [bool; 256] = table(Escape::Quoted);
static TOKEN: [bool; 256] = table(Escape::Token);
static JSON: [bool; 256] = table(Escape::Json);

impl Escape {
    /// Whether any byte of the word `x` needs escaping: exact for the word,
    /// as a borrow or carry between bytes starts only at a byte that needs
    /// escaping itself.
    #[inline(always)]
    fn word_dirty(self, x: u64) -> bool {
        // Below 0x20.
        let mut dirty = x.wrapping_sub(ONES * 0x20) & !x;
        dirty |= has(x, b'"') | has(x, b'\\');
        if self != Escape::Json {
            // 0x7f and up.
            dirty |= x.wrapping_add(ONES) | x;
        }
        if self == Escape::Token {
            dirty |= has(x, b' ');
        }
        dirty & HIGHS != 0
    }

    #[inline(always)]
    fn table(self) -> &'static [bool; 256] {
        match self {
            Escape::Quoted => &QUOTED,
            Escape::Token => &TOKEN,
            Escape::Json => &JSON,
        }
    }
}

#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

/// How many leading bytes of `s` need no escaping: eight at a time, the
/// last (partial) eight as the overlapping last word, bytes one by one
/// only in a short string or around a byte to escape.
#[inline(always)]
fn clean_run(s: &[u8], how: Escape) -> usize {
    let n = s.len();
    let mut i = 0;
    if n >= 8 {
        while i + 8 <= n {
            if how.word_dirty(word(s, i)) {
                break;
            }
            i += 8;
        }
        if i == n || (i + 8 > n && !how.word_dirty(word(s, n - 8))) {
            return n;
        }
    }
    let t = how.table();
    while i < n && !t[s[i] as usize] {
        i += 1;
    }
    i
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Append `s` escaped as `how` says (without surrounding quotes); `how` is
/// a constant at each call, so each kind gets a loop of its own. Inlined
/// into the formats with its callers below: a call per string, and the
/// setup of its constants, cost ~10% of a line.
#[inline(always)]
fn escape(out: &mut Room<'_>, s: &[u8], how: Escape) {
    let mut rest = s;
    loop {
        let n = clean_run(rest, how);
        out.put(&rest[..n]);
        let Some(&b) = rest.get(n) else { return };
        match how {
            Escape::Json => json_escape(out, b),
            Escape::Quoted | Escape::Token => {
                out.put(&[b'\\', b'x', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]])
            }
        }
        rest = &rest[n + 1..];
    }
}

/// Append `s` escaped as `how` says (without surrounding quotes).
#[inline(always)]
pub(crate) fn escaped(out: &mut Room<'_>, s: &[u8], how: Escape) {
    match how {
        Escape::Quoted => quoted(out, s),
        Escape::Token => escape(out, s, Escape::Token),
        Escape::Json => json(out, s),
    }
}

#[inline(always)]
pub(crate) fn quoted(out: &mut Room<'_>, s: &[u8]) {
    escape(out, s, Escape::Quoted)
}

#[inline(always)]
fn json(out: &mut Room<'_>, s: &[u8]) {
    escape(out, s, Escape::Json)
}

#[cold]
fn json_escape(out: &mut Room<'_>, b: u8) {
    match b {
        b'"' => out.put(b"\\\""),
        b'\\' => out.put(b"\\\\"),
        b'\n' => out.put(b"\\n"),
        b'\r' => out.put(b"\\r"),
        b'\t' => out.put(b"\\t"),
        _ => out.put(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[(b >> 4) as usize],
            HEX[(b & 15) as usize],
        ]),
    }
}

/// A JSON string, quoted, or `null`.
#[inline(always)]
pub(crate) fn json_str(out: &mut Room<'_>, s: Option<&str>) {
    match s {
        Some(s) => {
            out.byte(b'"');
            json(out, s.as_bytes());
            out.byte(b'"');
        }
        None => out.put(b"null"),
    }
}

/// Append `n` in decimal.
#[inline]
pub(crate) fn decimal(out: &mut Room<'_>, n: u64) {
    match n {
        // Statuses, octets, workers: most numbers in a line.
        0..1000 => small(out, n as u32),
        _ => long(out, n),
    }
}

#[inline(always)]
fn small(out: &mut Room<'_>, n: u32) {
    let d = [
        b'0' + (n / 100) as u8,
        b'0' + (n / 10 % 10) as u8,
        b'0' + (n % 10) as u8,
    ];
    match n {
        0..10 => out.byte(d[2]),
        10..100 => out.put(&d[1..]),
        _ => out.put(&d),
    }
}

fn long(out: &mut Room<'_>, n: u64) {
    // Two digits a step: a digit a step cost ~90 instructions for 5120.
    out.put(itoa::Buffer::new().format(n).as_bytes());
}

/// Append `n` in decimal, zero-padded to `width` digits (`n` fits).
pub(crate) fn padded(out: &mut Room<'_>, n: u32, width: usize) {
    let mut digits = [b'0'; 4];
    let mut n = n;
    for d in digits[..width].iter_mut().rev() {
        *d = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.put(&digits[..width]);
}

/// A duration in milliseconds with three decimals (microseconds): `12.345`.
pub(crate) fn millis(out: &mut Room<'_>, d: Duration) {
    // Seconds and microseconds apart: `as_micros` is 128-bit arithmetic.
    let micros = d.subsec_micros();
    decimal(
        out,
        d.as_secs().saturating_mul(1000) + u64::from(micros / 1000),
    );
    out.byte(b'.');
    padded(out, micros % 1000, 3);
}

/// An IP address as Apache's `%h` writes it: IPv4-mapped IPv6 addresses
/// (a dual-stack listener's IPv4 clients) as plain IPv4.
pub(crate) fn ip(out: &mut Room<'_>, ip: IpAddr) {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            let [a, b, c, d] = v4.octets();
            small(out, a.into());
            for octet in [b, c, d] {
                out.byte(b'.');
                small(out, octet.into());
            }
        }
        // Rare enough that `Display`'s cost does not matter.
        IpAddr::V6(v6) => out.with_vec(|v| {
            use std::io::Write;
            let _ = write!(v, "{v6}");
        }),
    }
}

/// The last address written, and its text.
#[derive(Default)]
pub(crate) struct LastIp {
    ip: Option<IpAddr>,
    text: Vec<u8>,
}

impl LastIp {
    pub(crate) fn write(&mut self, out: &mut Room<'_>, addr: IpAddr) {
        if self.ip != Some(addr) {
            self.text.clear();
            ip(&mut Room::new(&mut self.text, 48), addr);
            self.ip = Some(addr);
        }
        out.put(&self.text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: impl FnOnce(&mut Room<'_>)) -> String {
        let mut v = Vec::new();
        f(&mut Room::new(&mut v, 0));
        String::from_utf8(v).unwrap()
    }

    fn esc(s: &str, how: Escape) -> String {
        run(|r| escaped(r, s.as_bytes(), how))
    }

    #[test]
    fn quoted_escapes_like_nginx() {
        assert_eq!(esc("plain/path?a=b&c", Escape::Quoted), "plain/path?a=b&c");
        assert_eq!(esc("a\"b\\c", Escape::Quoted), "a\\x22b\\x5Cc");
        assert_eq!(esc("tab\there\n", Escape::Quoted), "tab\\x09here\\x0A");
        assert_eq!(esc("del\x7f", Escape::Quoted), "del\\x7F");
        assert_eq!(esc("é", Escape::Quoted), "\\xC3\\xA9");
        assert_eq!(esc("a b", Escape::Quoted), "a b");
        assert_eq!(esc("a b", Escape::Token), "a\\x20b");
    }

    #[test]
    fn every_position_of_a_word_is_seen() {
        // A dirty byte at each offset of the 8-byte words and the tail.
        for at in 0..20 {
            let mut s = "x".repeat(20);
            s.replace_range(at..at + 1, "\"");
            let out = esc(&s, Escape::Quoted);
            assert_eq!(out.len(), 23, "{at}: {out}");
            assert_eq!(&out[at..at + 4], "\\x22");
        }
        // Bytes next to the escaped ones, in every class, pass untouched.
        let all: String = (0x20u8..0x7f).map(char::from).collect();
        let expect = all.replace('\\', "\\x5C").replace('"', "\\x22");
        assert_eq!(esc(&all, Escape::Quoted), expect);
    }

    #[test]
    fn json_escapes_fully() {
        assert_eq!(esc("a\"b\\c", Escape::Json), "a\\\"b\\\\c");
        assert_eq!(
            esc("\n\r\t\x01\x1f", Escape::Json),
            "\\n\\r\\t\\u0001\\u001F"
        );
        assert_eq!(esc("é ✓ \x7f", Escape::Json), "é ✓ \x7f");
        assert_eq!(run(|r| json_str(r, None)), "null");
        let s = "\"\\\u{1}ünï\ncode\u{2028}";
        let line = run(|r| json_str(r, Some(s)));
        let back: String = serde_json::from_str(&line).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn numbers() {
        assert_eq!(run(|r| decimal(r, 0)), "0");
        for n in [
            9,
            10,
            99,
            100,
            999,
            1000,
            5120,
            4_294_967_295,
            4_294_967_296,
            u64::MAX,
        ] {
            assert_eq!(run(|r| decimal(r, n)), n.to_string());
        }
        assert_eq!(run(|r| padded(r, 7, 3)), "007");
        assert_eq!(run(|r| millis(r, Duration::from_micros(12_345))), "12.345");
        assert_eq!(run(|r| millis(r, Duration::from_nanos(999))), "0.000");
        assert_eq!(run(|r| millis(r, Duration::from_secs(3))), "3000.000");
    }

    #[test]
    fn addresses() {
        let v4: IpAddr = "10.0.255.1".parse().unwrap();
        assert_eq!(run(|r| ip(r, v4)), "10.0.255.1");
        let mapped: IpAddr = "::ffff:192.168.0.9".parse().unwrap();
        assert_eq!(run(|r| ip(r, mapped)), "192.168.0.9");
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        assert_eq!(run(|r| ip(r, v6)), "2001:db8::1");
        let mut last = LastIp::default();
        let seq = run(|r| {
            for a in [v4, v4, v6, v4] {
                last.write(r, a);
                r.byte(b' ');
            }
        });
        assert_eq!(seq, "10.0.255.1 10.0.255.1 2001:db8::1 10.0.255.1 ");
    }
}
