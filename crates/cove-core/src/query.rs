//! Query-string parsing. Unlike Hull, keys and values are percent-decoded and
//! `+` becomes a space (docs/compat.md).

/// Decode `%XX` escapes (and `+` as space when `plus_is_space`). Invalid
/// escapes are kept as written; the bytes are returned lossily as UTF-8 only
/// when they are not valid UTF-8.
pub fn percent_decode(s: &str, plus_is_space: bool) -> String {
    if !s.bytes().any(|b| b == b'%' || (plus_is_space && b == b'+')) {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Split `a=1&b=2&flag` into decoded pairs (`flag` → `""`), skipping empty
/// keys. Duplicates are kept in order; the binding lets the last one win.
pub fn parse_query(raw: &str) -> Vec<(String, String)> {
    raw.split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (!k.is_empty()).then(|| (percent_decode(k, true), percent_decode(v, true)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_plus() {
        assert_eq!(percent_decode("a%20b+c", true), "a b c");
        assert_eq!(percent_decode("a%20b+c", false), "a b+c");
        assert_eq!(percent_decode("%C3%A9", false), "é");
    }

    #[test]
    fn keeps_invalid_escapes() {
        assert_eq!(percent_decode("100%", false), "100%");
        assert_eq!(percent_decode("%zz%4", false), "%zz%4");
        assert_eq!(percent_decode("%4", false), "%4");
    }

    #[test]
    fn parses_pairs() {
        assert_eq!(
            parse_query("a=1&flag&=x&b=x%3Dy&a=2&&c="),
            vec![
                ("a".into(), "1".into()),
                ("flag".into(), "".into()),
                ("b".into(), "x=y".into()),
                ("a".into(), "2".into()),
                ("c".into(), "".into()),
            ]
        );
    }
}
