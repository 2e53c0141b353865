//! JSON encoding primitives shared by the runtimes' value walkers: strings,
//! integers (never rounded) and floats (shortest round-trip form).
// Escapes are written unchecked into room reserved for them (`Room`'s
// `*_reserved` writers).
#![allow(unsafe_code)]

use std::fmt;

use cove_core::{append, Room};

/// Values JSON cannot carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonError {
    NotFinite,
    Unsupported(&'static str),
    SparseArray,
    MixedKeys,
    TooDeep,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::NotFinite => f.write_str("cannot encode NaN or infinity as JSON"),
            JsonError::Unsupported(t) => write!(f, "cannot encode a {t} as JSON"),
            JsonError::SparseArray => f.write_str("invalid table: sparse array (holes cannot be JSON)"),
            JsonError::MixedKeys => f.write_str(
                "invalid table: mixed or invalid key types (use only string keys, or a 1..n sequence)",
            ),
            JsonError::TooDeep => f.write_str("value nested too deeply for JSON (does a table contain itself?)"),
        }
    }
}

impl std::error::Error for JsonError {}

/// What a `json.*` function does; how each runtime writes and reads JSON
/// is its binding's converter (Lua by Hull's rules, JS `JSON.stringify` /
/// `JSON.parse`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonOp {
    /// The argument as JSON text.
    Encode,
    /// The value JSON text holds.
    Decode,
}

/// One `json.*` function as the capability table binds it
/// ([`crate::cap`]) and the catalog lists it.
pub struct JsonFn {
    pub name: &'static str,
    pub op: JsonOp,
    pub params: &'static [crate::sig::Param],
    pub ret: crate::sig::Ty,
    pub doc: &'static str,
}

/// `json.*` (Hull §6).
pub const FUNCTIONS: &[JsonFn] = &[
    JsonFn {
        name: "encode",
        op: JsonOp::Encode,
        params: &[crate::sig::p("value", crate::sig::Ty::Any)],
        ret: crate::sig::Ty::Str,
        doc: "the value as JSON text (Lua: keys sorted, an empty table is []; JS: JSON.stringify, undefined gives \"null\")",
    },
    JsonFn {
        name: "decode",
        op: JsonOp::Decode,
        params: &[crate::sig::p("text", crate::sig::Ty::Str)],
        ret: crate::sig::Ty::Any,
        doc: "the value of JSON text (Lua: null becomes nil; JS: JSON.parse)",
    },
];

/// Append `s` as a JSON string. Invalid UTF-8 becomes U+FFFD.
pub fn write_string(out: &mut Vec<u8>, s: &[u8]) {
    put_string(&mut Room::new(out, s.len() + 2), s);
}

/// Append `s` as a JSON string if it is valid UTF-8; false (and nothing
/// written) if it is not.
pub fn write_utf8(out: &mut Vec<u8>, s: &[u8]) -> bool {
    let mut room = Room::new(out, s.len() + 2);
    // Most strings are plain ASCII with nothing to escape: copy them whole.
    if is_plain(s) {
        put_plain(&mut room, s);
        return true;
    }
    if !is_utf8(s) {
        return false;
    }
    put_escaped(&mut room, s);
    true
}

fn is_utf8(s: &[u8]) -> bool {
    s.is_ascii() || std::str::from_utf8(s).is_ok()
}

/// Whether `s` is ASCII with nothing JSON escapes: its JSON is `"s"`.
#[inline]
pub fn is_plain(s: &[u8]) -> bool {
    if s.len() < 8 {
        return s.iter().all(|&b| PLAIN[b as usize]);
    }
    is_plain_long(s)
}

/// The bytes [`is_plain`] accepts: one load each, where the ranges take
/// four comparisons.
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 0x80 {
        t[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    t
};

/// [`is_plain`] eight bytes at a time (`s` has at least eight).
fn is_plain_long(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(8);
    let mut bad = 0;
    for c in &mut chunks {
        bad |= to_escape(word(c));
    }
    // The last eight bytes again, overlapping: the tail among them.
    bad | to_escape(word(&s[s.len() - 8..])) == 0
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Non-zero when a byte of `w` is below 0x20, from 0x80 up, `"` or `\`.
/// (`x - ONES*n & !x & HIGH` is non-zero exactly when a byte of `x` is
/// below `n`, for `n` up to 0x80.)
#[inline(always)]
fn to_escape(w: u64) -> u64 {
    escaped(w) | w & HIGH
}

/// Non-zero when a byte of `w` is below 0x20, `"` or `\`: what JSON escapes
/// in valid UTF-8. Its lowest set bit is that of the first such byte (a
/// borrow only runs upwards from a byte that is flagged anyway).
#[inline(always)]
fn escaped(w: u64) -> u64 {
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    below(w, 0x20) | below(w ^ (ONES * 0x22), 1) | below(w ^ (ONES * 0x5c), 1)
}

fn word(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().unwrap_or_default())
}

/// Room for [`put_string`] to write `n` bytes of text without growing the
/// buffer: all of it when nothing needs escaping; a short string (a small
/// JSON body echoed back, a quote every few bytes) gets room for any
/// escape but `\u00XX`, a long one for some.
pub fn string_room(n: usize) -> usize {
    if n <= SHORT {
        2 * n + 2
    } else {
        n + 2 + n / 2
    }
}

/// [`write_string`] through a [`Room`]. Inlined, so the room's position
/// stays in a register; strings to escape take a call.
#[inline(always)]
pub fn put_string(room: &mut Room<'_>, s: &[u8]) {
    if is_plain(s) {
        put_plain(room, s);
    } else {
        put_unplain(room, s);
    }
}

#[inline(always)]
fn put_plain(room: &mut Room<'_>, s: &[u8]) {
    room.reserve(s.len() + 2);
    room.byte(b'"');
    room.put(s);
    room.byte(b'"');
}

#[cold]
#[inline(never)]
fn put_unplain(room: &mut Room<'_>, s: &[u8]) {
    if is_utf8(s) {
        put_escaped(room, s);
    } else {
        put_escaped(room, String::from_utf8_lossy(s).as_bytes());
    }
}

/// How each byte is written: 0 as it is, `u` as `\u00XX`, any other
/// letter after a backslash. Bytes from 0x80 up (UTF-8 sequences) are 0.
const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        t[b] = b'u';
        b += 1;
    }
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'\n' as usize] = b'n';
    t[b'\r' as usize] = b'r';
    t[b'\t' as usize] = b't';
    t[0x08] = b'b';
    t[0x0c] = b'f';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Strings up to this long are escaped byte by byte; longer ones look
/// for runs of plain bytes eight bytes at a time.
const SHORT: usize = 128;

/// Write the (UTF-8) bytes `s` quoted, escaping what JSON requires.
fn put_escaped(room: &mut Room<'_>, s: &[u8]) {
    if s.len() <= SHORT {
        put_escaped_short(room, s);
    } else {
        put_escaped_long(room, s);
    }
}

/// [`put_escaped`] for a short string, such as a small JSON body echoed
/// back: with a quote every few bytes, the long form's runs are a byte or
/// two long and each run and escape is a checked write. Here the room is
/// reserved once, two bytes a byte (all escapes but `\u00XX`, which
/// reserves its four more when it comes), and written unchecked.
fn put_escaped_short(room: &mut Room<'_>, s: &[u8]) {
    room.reserve(2 * s.len() + 2);
    // SAFETY: before byte `i` is written at `at`, at least
    // `2 * (s.len() - i) + 1` bytes of room are left there: two for it, two
    // for each after it and one for the closing quote.
    unsafe {
        let mut at = room.cursor();
        *at = b'"';
        at = at.add(1);
        for (i, &b) in s.iter().enumerate() {
            let e = ESCAPE[b as usize];
            if e == 0 {
                *at = b;
                at = at.add(1);
                continue;
            }
            if e == b'u' {
                room.advance_to(at);
                room.reserve(6 + 2 * (s.len() - i - 1) + 1);
                at = room.cursor();
            }
            at = write_escape(at, b);
        }
        *at = b'"';
        room.advance_to(at.add(1));
    }
}

/// [`put_escaped`] for a long string: runs of plain bytes are found eight
/// bytes at a time and copied whole.
fn put_escaped_long(room: &mut Room<'_>, s: &[u8]) {
    room.reserve(s.len() + 2);
    room.byte(b'"');
    let mut run = 0;
    let mut i = 0;
    while i < s.len() {
        if i + 8 <= s.len() {
            let m = escaped(word(&s[i..]));
            if m == 0 {
                i += 8;
                continue;
            }
            i += m.trailing_zeros() as usize / 8;
        } else if ESCAPE[s[i] as usize] == 0 {
            i += 1;
            continue;
        }
        room.put(&s[run..i]);
        room.reserve(6);
        // SAFETY: reserved just above.
        unsafe { put_escape(room, s[i]) };
        i += 1;
        run = i;
    }
    room.put(&s[run..]);
    room.byte(b'"');
}

/// The escape of one byte that needs one.
///
/// # Safety
/// The room left holds its escape: six bytes for a control character,
/// two for `"` and `\`.
#[inline(always)]
unsafe fn put_escape(room: &mut Room<'_>, b: u8) {
    // SAFETY: the caller left room for this escape.
    unsafe {
        let at = write_escape(room.cursor(), b);
        room.advance_to(at);
    }
}

/// Write the escape of `b` at `at`; returns where it ends.
///
/// # Safety
/// `at` is writable for the escape's bytes (six for a control character,
/// two for `"` and `\`).
#[inline(always)]
unsafe fn write_escape(at: *mut u8, b: u8) -> *mut u8 {
    // SAFETY: the caller guarantees the bytes written.
    unsafe {
        match ESCAPE[b as usize] {
            b'u' => {
                let e = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 15) as usize],
                ];
                at.copy_from_nonoverlapping(e.as_ptr(), 6);
                at.add(6)
            }
            e => {
                *at = b'\\';
                *at.add(1) = e;
                at.add(2)
            }
        }
    }
}

/// Append an integer exactly (no `%.14g` rounding).
pub fn write_int(out: &mut Vec<u8>, n: i64) {
    append(out, itoa::Buffer::new().format(n).as_bytes());
}

/// The longest integer [`put_int`] writes (`-9223372036854775808`).
pub const MAX_INT_LEN: usize = 20;

/// The longest float [`put_float`] writes (`-1.7976931348623157e308` is 23).
pub const MAX_FLOAT_LEN: usize = 24;

/// [`write_int`] through a [`Room`].
#[inline]
pub fn put_int(room: &mut Room<'_>, n: i64) {
    room.put(itoa::Buffer::new().format(n).as_bytes());
}

/// Append a float: integral values below 2^53 print without a fraction
/// (`3`), others in shortest round-trip form (`0.1`, `1e+300`).
pub fn write_float(out: &mut Vec<u8>, f: f64) -> Result<(), JsonError> {
    put_float(&mut Room::new(out, MAX_FLOAT_LEN), f)
}

/// [`write_float`] through a [`Room`].
pub fn put_float(room: &mut Room<'_>, f: f64) -> Result<(), JsonError> {
    if !f.is_finite() {
        return Err(JsonError::NotFinite);
    }
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        // -0.0 lands here too and prints as 0, as in JavaScript.
        put_int(room, f as i64);
        return Ok(());
    }
    room.put(ryu::Buffer::new().format_finite(f).as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(bytes: &[u8]) -> String {
        let mut out = Vec::new();
        write_string(&mut out, bytes);
        String::from_utf8(out).unwrap()
    }

    fn f(x: f64) -> String {
        let mut out = Vec::new();
        write_float(&mut out, x).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_longest_numbers_fit_their_bounds() {
        let int = |n: i64| {
            let mut out = Vec::new();
            write_int(&mut out, n);
            out.len()
        };
        assert_eq!(int(i64::MIN), MAX_INT_LEN);
        assert!(int(i64::MAX) <= MAX_INT_LEN);
        for f in [
            f64::MIN,
            -f64::MIN_POSITIVE,
            -5e-324,
            -1.2345678901234567e-300,
        ] {
            let mut out = Vec::new();
            write_float(&mut out, f).unwrap();
            assert!(out.len() <= MAX_FLOAT_LEN, "{f}");
        }
    }

    #[test]
    fn the_plain_check_matches_the_byte_rule() {
        let plain = |s: &[u8]| {
            s.iter()
                .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\')
        };
        // Every byte value at every position of strings of 0..=20 bytes.
        for n in 0..=20 {
            for at in 0..n.max(1) {
                for b in 0..=255u8 {
                    let mut s = vec![b'x'; n];
                    if n > 0 {
                        s[at] = b;
                    }
                    assert_eq!(is_plain(&s), plain(&s), "byte {b:#x} at {at} of {n}");
                }
            }
        }
        assert!(is_plain(b""));
        assert!(is_plain(b" ~!#"));
    }

    /// Escaping byte by byte, as the encoder did before it skipped plain
    /// runs eight bytes at a time.
    fn escaped_bytewise(s: &[u8]) -> Vec<u8> {
        let mut out = vec![b'"'];
        for &b in s {
            match ESCAPE[b as usize] {
                0 => out.push(b),
                b'u' => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
                e => out.extend_from_slice(&[b'\\', e]),
            }
        }
        out.push(b'"');
        out
    }

    #[test]
    fn the_escaped_form_matches_the_byte_rule() {
        // Every byte value that UTF-8 text can hold alone, at every
        // position of strings of 0..=20 bytes, once and twice over.
        let text = |s: &[u8]| {
            let mut out = Vec::new();
            let mut room = Room::new(&mut out, 0);
            put_escaped(&mut room, s);
            drop(room);
            out
        };
        for n in 0..=20 {
            for at in 0..n.max(1) {
                for b in 0..0x80u8 {
                    let mut s = vec![b'x'; n];
                    if n > 0 {
                        s[at] = b;
                        s[n - 1 - at] = b;
                    }
                    assert_eq!(text(&s), escaped_bytewise(&s), "byte {b:#x} at {at} of {n}");
                }
            }
        }
        // Both sides of the short form's limit, where every byte is the
        // longest escape (its room's worst case) or one in a few is.
        for n in [SHORT - 1, SHORT, SHORT + 1, 3 * SHORT] {
            for b in [0x01u8, b'"', b'\\', b'\n', b'x'] {
                let all = vec![b; n];
                assert_eq!(text(&all), escaped_bytewise(&all), "{n} bytes {b:#x}");
                let some: Vec<u8> = (0..n).map(|i| if i % 3 == 0 { b } else { b'y' }).collect();
                assert_eq!(
                    text(&some),
                    escaped_bytewise(&some),
                    "{n} bytes, {b:#x} in three"
                );
            }
        }
        let mixed = "é\"\\\u{1}日本\n".repeat(5);
        assert_eq!(text(mixed.as_bytes()), escaped_bytewise(mixed.as_bytes()));
    }

    #[test]
    fn escapes_strings_like_hull() {
        assert_eq!(s(b"a\"b\\c\n\t\x01/"), r#""a\"b\\c\n\t\u0001/""#);
        assert_eq!(s("héllo ✓".as_bytes()), "\"héllo ✓\"");
        assert_eq!(s(b"\xff"), "\"\u{fffd}\"");
        // DEL (0x7f) needs no escape.
        assert_eq!(s(b"\x08\x0c\r\x1f\x7f"), "\"\\b\\f\\r\\u001f\u{7f}\"");
        assert_eq!(s("é\"\n".as_bytes()), "\"é\\\"\\n\"");
        assert_eq!(s(b"a\xffb\""), "\"a\u{fffd}b\\\"\"");
        let long = "x".repeat(40) + "\"" + &"y".repeat(40);
        assert_eq!(
            s(long.as_bytes()),
            format!("\"{}\\\"{}\"", "x".repeat(40), "y".repeat(40))
        );
    }

    #[test]
    fn numbers_keep_their_digits() {
        let mut out = Vec::new();
        write_int(&mut out, 9_007_199_254_740_993);
        assert_eq!(out, b"9007199254740993");
        assert_eq!(f(3.0), "3");
        assert_eq!(f(0.1), "0.1");
        assert_eq!(f(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(f(1e300), "1e300");
        assert_eq!(f(-0.0), "0");
        assert!(write_float(&mut Vec::new(), f64::NAN).is_err());
    }
}
