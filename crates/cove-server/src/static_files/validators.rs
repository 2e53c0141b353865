//! ETags, `Last-Modified`, conditional requests (RFC 9110 §13) and ranges
//! (§14). Every ETag is weak: one validator covers the identity, gzip and
//! brotli forms of a file, which weak comparison allows and strong does not.

use std::ops::RangeInclusive;

use hyper::header::HeaderMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The ETag of a file on disk: its modification time (seconds `.`
/// nanoseconds) and its size, in hex. Hull uses whole seconds, so an edit
/// within the same second that kept the size looked unchanged.
pub(super) fn dir_etag(modified: Option<SystemTime>, len: u64) -> String {
    match modified.and_then(|m| m.duration_since(UNIX_EPOCH).ok()) {
        Some(since) => format!(
            "W/\"{:x}.{:x}-{len:x}\"",
            since.as_secs(),
            since.subsec_nanos()
        ),
        None => format!("W/\"{len:x}\""),
    }
}

/// The ETag of a packed file: a hash of its bytes (a pack has no times;
/// Hull's size-only ETag made a same-size change look unchanged).
pub(super) fn pack_etag(hash: u64) -> String {
    format!("W/\"{hash:016x}\"")
}

/// `Last-Modified` is sent with whole seconds; comparisons use the same.
pub(super) fn whole_seconds(t: SystemTime) -> Option<SystemTime> {
    let since = t.duration_since(UNIX_EPOCH).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(since.as_secs()))
}

/// The opaque part of an entity tag (`"x"` of `W/"x"`), if it is one.
fn opaque(tag: &str) -> &str {
    tag.strip_prefix("W/").unwrap_or(tag)
}

/// Entity tags of an `If-None-Match`/`If-Range` value: `*`, or a list
/// whose tags may hold commas inside their quotes.
fn tags(value: &str) -> impl Iterator<Item = &str> {
    let mut rest = value;
    std::iter::from_fn(move || {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return None;
        }
        let start = if rest.starts_with("W/\"") { 3 } else { 1 };
        let end = if rest[start - 1..].starts_with('"') {
            rest[start..]
                .find('"')
                .map_or(rest.len(), |i| start + i + 1)
        } else {
            // Not a tag (`*` or junk): up to the next comma.
            rest.find(',').unwrap_or(rest.len())
        };
        let (tag, tail) = rest.split_at(end);
        rest = tail;
        Some(tag.trim())
    })
}

/// Whether `If-None-Match` values match `etag` (weak comparison).
fn none_match<'a>(values: impl Iterator<Item = &'a str>, etag: &str) -> bool {
    let want = opaque(etag);
    values.flat_map(tags).any(|t| t == "*" || opaque(t) == want)
}

/// The conditional headers of a GET or HEAD, as far as static files use them.
#[derive(Debug, Default)]
pub(super) struct Conditions<'a> {
    pub if_none_match: Vec<&'a str>,
    pub if_modified_since: Option<&'a str>,
    pub if_range: Option<&'a str>,
    pub range: Option<&'a str>,
}

impl<'a> Conditions<'a> {
    /// Values that are not text are left out (none is valid in these headers).
    pub fn of(headers: &'a HeaderMap) -> Conditions<'a> {
        let mut c = Conditions::default();
        for (name, value) in headers {
            let Ok(value) = value.to_str() else { continue };
            match name.as_str() {
                "if-none-match" => c.if_none_match.push(value),
                "if-modified-since" => c.if_modified_since = Some(value),
                "if-range" => c.if_range = Some(value),
                "range" => c.range = Some(value),
                _ => {}
            }
        }
        c
    }

    /// 304: `If-None-Match` matches; or, without it, the file was not
    /// modified after `If-Modified-Since` (RFC 9110 §13.2.2 order).
    pub fn not_modified(&self, etag: &str, modified: Option<SystemTime>) -> bool {
        if !self.if_none_match.is_empty() {
            return none_match(self.if_none_match.iter().copied(), etag);
        }
        let since = self
            .if_modified_since
            .and_then(|v| httpdate::parse_http_date(v.trim()).ok());
        match (since, modified.and_then(whole_seconds)) {
            (Some(since), Some(m)) => m <= since,
            _ => false,
        }
    }

    /// What the `Range` header asks of a body of `len` bytes.
    pub fn range(&self, modified: Option<SystemTime>, len: u64) -> Range {
        let Some(range) = self.range else {
            return Range::Full;
        };
        if !self.if_range_holds(modified) {
            return Range::Full;
        }
        parse_range(range, len)
    }

    /// `If-Range` needs a strong validator: our ETags are weak, so only a
    /// date equal to `Last-Modified` lets the range through.
    fn if_range_holds(&self, modified: Option<SystemTime>) -> bool {
        let Some(value) = self.if_range.map(str::trim) else {
            return true;
        };
        if value.starts_with('"') || value.starts_with("W/") {
            return false;
        }
        match (
            httpdate::parse_http_date(value),
            modified.and_then(whole_seconds),
        ) {
            (Ok(date), Some(m)) => date == m,
            _ => false,
        }
    }
}

/// The answer to a `Range` header.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Range {
    /// No range, one Cove ignores (malformed, or several: RFC 9110 lets a
    /// server answer those with the whole body), or an empty file.
    Full,
    /// 206 with these bytes.
    Part(RangeInclusive<u64>),
    /// 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

fn parse_range(value: &str, len: u64) -> Range {
    use http_range_header::RangeUnsatisfiableError as E;
    let Ok(parsed) = http_range_header::parse_range_header(value.trim()) else {
        return Range::Full;
    };
    match parsed.validate(len) {
        Ok(ranges) if ranges.len() == 1 => {
            ranges.into_iter().next().map_or(Range::Full, Range::Part)
        }
        Ok(_) => Range::Full,
        Err(E::Unsatisfiable) => Range::Unsatisfiable,
        Err(_) => Range::Full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(headers: &HeaderMap) -> Conditions<'_> {
        Conditions::of(headers)
    }

    fn h(pairs: &[(&str, &str)]) -> HeaderMap {
        cove_core::header_map(pairs)
    }

    #[test]
    fn etag_formats() {
        let t = UNIX_EPOCH + Duration::new(0x65f0_a1b2, 5);
        assert_eq!(dir_etag(Some(t), 0x1a4), "W/\"65f0a1b2.5-1a4\"");
        assert_eq!(dir_etag(None, 16), "W/\"10\"");
        assert_eq!(pack_etag(0xabc), "W/\"0000000000000abc\"");
    }

    #[test]
    fn if_none_match_uses_weak_comparison_lists_and_star() {
        let e = "W/\"abc\"";
        for v in [
            "W/\"abc\"",
            "\"abc\"",
            "\"x\", W/\"abc\"",
            "*",
            "\"a,b\",\"abc\"",
        ] {
            let hs = h(&[("if-none-match", v)]);
            assert!(cond(&hs).not_modified(e, None), "{v}");
        }
        for v in ["\"abcd\"", "\"a,abc\"", "W/\"ab\"", "abc", ""] {
            let hs = h(&[("if-none-match", v)]);
            assert!(!cond(&hs).not_modified(e, None), "{v}");
        }
        let two = h(&[("if-none-match", "\"x\""), ("if-none-match", "\"abc\"")]);
        assert!(cond(&two).not_modified(e, None));
    }

    #[test]
    fn if_modified_since_only_without_if_none_match() {
        let m = UNIX_EPOCH + Duration::new(1_700_000_000, 900_000_000);
        let same = httpdate::fmt_http_date(m);
        let earlier = httpdate::fmt_http_date(m - Duration::from_secs(1));
        assert!(cond(&h(&[("if-modified-since", &same)])).not_modified("W/\"x\"", Some(m)));
        assert!(!cond(&h(&[("if-modified-since", &earlier)])).not_modified("W/\"x\"", Some(m)));
        assert!(!cond(&h(&[("if-modified-since", "garbage")])).not_modified("W/\"x\"", Some(m)));
        let both = h(&[("if-none-match", "\"y\""), ("if-modified-since", &same)]);
        assert!(!cond(&both).not_modified("W/\"x\"", Some(m)));
    }

    #[test]
    fn ranges() {
        let r = |v: &str, len| cond(&h(&[("range", v)])).range(None, len);
        assert_eq!(r("bytes=0-9", 100), Range::Part(0..=9));
        assert_eq!(r("bytes=90-", 100), Range::Part(90..=99));
        assert_eq!(r("bytes=-5", 100), Range::Part(95..=99));
        assert_eq!(r("bytes=-500", 100), Range::Part(0..=99));
        assert_eq!(r("bytes=50-500", 100), Range::Part(50..=99));
        assert_eq!(r("bytes=100-", 100), Range::Unsatisfiable);
        assert_eq!(r("bytes=-0", 100), Range::Unsatisfiable);
        assert_eq!(r("bytes=0-1,5-6", 100), Range::Full);
        assert_eq!(r("bytes=0-1,500-600", 100), Range::Part(0..=1));
        assert_eq!(r("items=0-1", 100), Range::Full);
        assert_eq!(r("bytes=5-1", 100), Range::Full);
        assert_eq!(r("bytes=0-1", 0), Range::Unsatisfiable);
        let none = h(&[]);
        assert_eq!(cond(&none).range(None, 100), Range::Full);
    }

    #[test]
    fn if_range_needs_the_exact_date() {
        let m = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let date = httpdate::fmt_http_date(m);
        let older = httpdate::fmt_http_date(m - Duration::from_secs(60));
        let r = |if_range: &str| {
            let hs = h(&[("range", "bytes=0-0"), ("if-range", if_range)]);
            cond(&hs).range(Some(m), 10)
        };
        assert_eq!(r(&date), Range::Part(0..=0));
        assert_eq!(r(&older), Range::Full);
        assert_eq!(r("W/\"x\""), Range::Full);
        assert_eq!(r("\"x\""), Range::Full);
    }
}
