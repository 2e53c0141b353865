//! Numbers as each runtime prints them, and HTML escaping.

use crate::host::Flavor;
use cove_core::append;

/// Append `f` as the runtime would print it: Lua `tostring` (`%.14g`, with
/// `.0` added to integral values: `3.0`, `1e+15`), JS `String(n)` (`3`,
/// `0.1`, `1e21`).
pub(crate) fn float(out: &mut Vec<u8>, f: f64, flavor: Flavor) {
    match flavor {
        Flavor::Js => out.extend_from_slice(ryu_js::Buffer::new().format(f).as_bytes()),
        Flavor::Lua => out.extend_from_slice(cove_core::lua_float(f).as_bytes()),
    }
}

/// Per byte: 0 if it is written as is, 1 if it is escaped in both
/// flavors, 2 for `` ` `` (escaped for JS only).
static ESCAPED: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'&' as usize] = 1;
    t[b'<' as usize] = 1;
    t[b'>' as usize] = 1;
    t[b'"' as usize] = 1;
    t[b'\'' as usize] = 1;
    t[b'`' as usize] = 2;
    t
};

/// The bytes of [`ESCAPED`] that are escaped in `flavor`.
#[inline]
fn escape_mask(flavor: Flavor) -> u8 {
    match flavor {
        Flavor::Lua => 1,
        Flavor::Js => 3,
    }
}

/// Append `s` HTML-escaped: `& < > " '` (and `` ` `` for JS, as Hull's JS
/// engine did). One table look-up per byte; text with nothing to escape
/// (most of it) is copied in one go.
pub(crate) fn escape(out: &mut Vec<u8>, s: &[u8], flavor: Flavor) {
    if !needs_escape(s, flavor) {
        append(out, s);
        return;
    }
    let mask = escape_mask(flavor);
    let first = s
        .iter()
        .position(|&b| ESCAPED[b as usize] & mask != 0)
        .unwrap_or(s.len());
    let mut start = 0;
    for (i, &b) in s.iter().enumerate().skip(first) {
        if ESCAPED[b as usize] & mask == 0 {
            continue;
        }
        let rep: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            b'\'' => b"&#39;",
            _ => b"&#96;",
        };
        out.extend_from_slice(&s[start..i]);
        out.extend_from_slice(rep);
        start = i + 1;
    }
    out.extend_from_slice(&s[start..]);
}

/// Whether [`escape`] would change `s` (a byte at a time: the text
/// written is mostly short, and a word-at-a-time check for six different
/// bytes cost more on it).
#[inline]
pub(crate) fn needs_escape(s: &[u8], flavor: Flavor) -> bool {
    let mask = escape_mask(flavor);
    s.iter().any(|&b| ESCAPED[b as usize] & mask != 0)
}

/// Append `s` as a JSON string literal.
pub(crate) fn json_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for ch in String::from_utf8_lossy(s).chars() {
        match ch {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(f: f64, flavor: Flavor) -> String {
        let mut out = Vec::new();
        float(&mut out, f, flavor);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_print_like_lua_tostring() {
        for (f, want) in [
            (3.0, "3.0"),
            (-3.0, "-3.0"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.33333333333333"),
            (1e15, "1e+15"),
            (1e14, "1e+14"),
            (123456789012345.0, "1.2345678901234e+14"),
            (12345678901234.0, "12345678901234.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (2.5e-300, "2.5e-300"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(show(f, Flavor::Lua), want, "{f}");
        }
    }

    #[test]
    fn floats_print_like_js_string() {
        for (f, want) in [
            (3.0, "3"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (-0.5, "-0.5"),
            (f64::NAN, "NaN"),
        ] {
            assert_eq!(show(f, Flavor::Js), want, "{f}");
        }
    }

    #[test]
    fn escapes_html() {
        let mut out = Vec::new();
        escape(&mut out, b"<a href=\"x\">'&'`</a>", Flavor::Lua);
        assert_eq!(
            out,
            b"&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;`&lt;/a&gt;"
        );
        out.clear();
        escape(&mut out, b"`x`", Flavor::Js);
        assert_eq!(out, b"&#96;x&#96;");
    }

    #[test]
    fn writes_json_strings() {
        let mut out = Vec::new();
        json_string(&mut out, "a\"b\\\n\u{1}é".as_bytes());
        assert_eq!(String::from_utf8(out).unwrap(), "\"a\\\"b\\\\\\n\\u0001é\"");
    }
}
