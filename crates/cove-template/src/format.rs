//! Numbers as each runtime prints them, and HTML escaping.

use crate::host::Flavor;

/// Append `f` as the runtime would print it: Lua `tostring` (`%.14g`, with
/// `.0` added to integral values: `3.0`, `1e+15`), JS `String(n)` (`3`,
/// `0.1`, `1e21`).
pub(crate) fn float(out: &mut Vec<u8>, f: f64, flavor: Flavor) {
    match flavor {
        Flavor::Js => out.extend_from_slice(ryu_js::Buffer::new().format(f).as_bytes()),
        Flavor::Lua => {
            let s = lua_g14(f);
            out.extend_from_slice(s.as_bytes());
            // lua_Number2str: a result made only of digits and '-' gets ".0".
            if s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                out.extend_from_slice(b".0");
            }
        }
    }
}

/// C's `%.14g`.
fn lua_g14(f: f64) -> String {
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

/// Append `s` HTML-escaped: `& < > " '` (and `` ` `` for JS, as Hull's JS
/// engine did).
pub(crate) fn escape(out: &mut Vec<u8>, s: &[u8], flavor: Flavor) {
    let backtick = flavor == Flavor::Js;
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let rep: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            b'\'' => b"&#39;",
            b'`' if backtick => b"&#96;",
            _ => continue,
        };
        out.extend_from_slice(&s[start..i]);
        out.extend_from_slice(rep);
        start = i + 1;
    }
    out.extend_from_slice(&s[start..]);
}

/// Whether [`escape`] would change `s`.
pub(crate) fn needs_escape(s: &[u8], flavor: Flavor) -> bool {
    let backtick = flavor == Flavor::Js;
    s.iter()
        .any(|&b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'') || (backtick && b == b'`'))
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
