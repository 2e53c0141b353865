//! Bytes as text, for runtimes whose strings must be UTF-8.
#![allow(unsafe_code)]

use std::borrow::Cow;

/// `bytes` as UTF-8, invalid sequences replaced by U+FFFD, exactly as
/// `String::from_utf8_lossy` does. Both the lossy scan and `str::from_utf8`
/// cost ~450 instructions on a 30-byte request body; an ASCII check, a
/// word at a time, ~30, and most text is ASCII.
pub fn utf8_lossy(bytes: &[u8]) -> Cow<'_, str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is UTF-8.
        return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `f` as Lua's `tostring` prints a float: C's `%.14g`, with `.0` added
/// to a result made only of digits and `-` (`3.0`, `1e+15`, `0.1`).
pub fn lua_float(f: f64) -> String {
    let mut s = g14(f);
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        s.push_str(".0");
    }
    s
}

/// `f` as JavaScript's `String(n)` prints it for the values Cove writes
/// as text (header values, names): whole numbers below 1e21 without a
/// fraction (`2`), others in Rust's shortest form (`0.5`).
pub fn js_number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        f.to_string()
    }
}

/// C's `%.14g`.
fn g14(f: f64) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The exponent %g decides by is the one of the %.13e rendering.
    let sci = format!("{f:.13e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..14).contains(&exp) {
        let fixed = format!("{:.*}", (13 - exp) as usize, f);
        strip_zeros(&fixed).to_string()
    } else {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.abs())
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_what_the_std_lossy_replaces() {
        for b in [&b"plain"[..], "é ü 😀".as_bytes(), b"a\xffb\xe2\x82", b""] {
            assert_eq!(utf8_lossy(b), String::from_utf8_lossy(b));
        }
        assert!(matches!(utf8_lossy(b"ok"), Cow::Borrowed("ok")));
    }
}
