//! The parts of an outbound URL the manifest check needs (Hull §6.7): only
//! `http://` and `https://`, a host, an optional port. Shared with smtp's
//! host check.

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub https: bool,
    /// As written in the URL, without IPv6 brackets.
    pub host: String,
    pub port: u16,
}

/// Split `url` into its target; the reason names what is wrong.
pub(crate) fn parse(url: &str) -> Result<Target, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("invalid URL {url:?}: expected http://host/path"))?;
    let https = match scheme.to_ascii_lowercase().as_str() {
        "http" => false,
        "https" => true,
        _ => {
            return Err(format!(
                "unsupported URL scheme {scheme:?} in {url:?}: only http and https"
            ))
        }
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    // `http://allowed.com@evil.com/` must not pass the check as allowed.com.
    if authority.contains('@') {
        return Err(format!(
            "credentials in the URL are not supported ({url:?}); send an Authorization header"
        ));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6
            .split_once(']')
            .ok_or_else(|| format!("invalid URL {url:?}: unclosed [ in the host"))?;
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("invalid URL {url:?}: junk after ]"))?,
            ),
        };
        (host, port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains(':') && !authority.starts_with('[') {
        return Err(format!("invalid URL {url:?}: no host"));
    }
    let port = match port {
        None => {
            if https {
                443
            } else {
                80
            }
        }
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("invalid port {p:?} in {url:?}"))?,
    };
    Ok(Target {
        https,
        host: host.to_string(),
        port,
    })
}

/// The request target sent on the request line (`/` when the URL has none).
pub(crate) fn path(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    match rest.find(['/', '?']) {
        Some(i) => &rest[i..],
        None => "/",
    }
}

/// Hull's rule: the host (no port) equals one of the manifest's `hosts`,
/// ignoring case; no wildcards. IPv6 hosts match with or without brackets.
pub(crate) fn allowed(hosts: &[String], host: &str) -> bool {
    let bare = |h: &str| h.trim_start_matches('[').trim_end_matches(']').to_string();
    let host = bare(host);
    hosts.iter().any(|h| bare(h).eq_ignore_ascii_case(&host))
}

/// Why a host was refused, listing what the manifest allows.
pub(crate) fn denied(hosts: &[String], host: &str) -> String {
    let list: Vec<String> = hosts.iter().map(|h| format!("{h:?}")).collect();
    format!(
        "host {host:?} is not in the manifest's hosts list (hosts: {})",
        list.join(", ")
    )
}
