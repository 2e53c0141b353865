//! Whether a client would rather read the error as an HTML page (a browser)
//! than as JSON (an API client, `curl`, `fetch`).

/// True when `Accept` ranks `text/html` above `application/json`. A tie
/// (`*/*`, no header, both listed) goes to JSON: browsers always name
/// `text/html`, while API clients send `*/*` or nothing.
pub(crate) fn prefers_html(accept: Option<&str>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    quality(accept, "text", "html") > quality(accept, "application", "json")
}

/// The quality `accept` gives `kind/sub`: that of the most specific range
/// matching it (RFC 9110 §12.5.1), 0 when none does; in thousandths.
fn quality(accept: &str, kind: &str, sub: &str) -> u16 {
    let mut best: Option<(u8, u16)> = None;
    for range in accept.split(',') {
        let mut params = range.split(';');
        let media = params.next().unwrap_or_default().trim();
        let Some((k, s)) = media.split_once('/') else {
            continue;
        };
        let specificity = match (k.trim(), s.trim()) {
            ("*", "*") => 0,
            (k, "*") if k.eq_ignore_ascii_case(kind) => 1,
            (k, s) if k.eq_ignore_ascii_case(kind) && s.eq_ignore_ascii_case(sub) => 2,
            _ => continue,
        };
        let q = params
            .filter_map(|p| p.split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .map_or(1000, |(_, v)| thousandths(v.trim()));
        if best.is_none_or(|(spec, bq)| specificity > spec || (specificity == spec && q > bq)) {
            best = Some((specificity, q));
        }
    }
    best.map_or(0, |(_, q)| q)
}

/// `0.8` as 800; anything that is not a quality counts as 0.
fn thousandths(v: &str) -> u16 {
    match v.parse::<f32>() {
        Ok(q) if (0.0..=1.0).contains(&q) => (q * 1000.0).round() as u16,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_get_html() {
        for accept in [
            // Firefox, Chrome, Safari navigations.
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
            "text/html",
            "TEXT/HTML; charset=utf-8",
            "text/*, application/json;q=0.5",
            "application/json;q=0.1, text/html",
        ] {
            assert!(prefers_html(Some(accept)), "{accept}");
        }
    }

    #[test]
    fn api_clients_get_json() {
        for accept in [
            None,
            Some(""),
            Some("*/*"),
            Some("application/json"),
            Some("application/json, text/plain, */*"),
            Some("text/html, application/json"),
            Some("text/html;q=0.5, application/json"),
            Some("text/html;q=0, */*"),
            Some("text/html;q=bogus"),
            Some("text/plain"),
        ] {
            assert!(!prefers_html(accept), "{accept:?}");
        }
    }
}
