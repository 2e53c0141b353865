//! What a server is spoken to over: plain HTTP/1.1 (the harness's own
//! client, servers.rs), or for the `tls` and `h2` tables HTTPS, HTTP/2 on
//! TLS and h2c. Those requests go through curl, with certificate checks off
//! (the run's certificate is self-signed), and fail unless curl spoke the
//! protocol asked for: a server that falls back to HTTP/1.1 is not measured
//! as an HTTP/2 one.

use std::process::{Command, Stdio};

use anyhow::{anyhow, bail, Context, Result};

use crate::servers::Reply;
use crate::workloads::{Group, Table};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    Http1,
    /// HTTP/1.1 over TLS.
    Https,
    /// HTTP/2 over TLS, negotiated by ALPN.
    H2,
    /// HTTP/2 over plain TCP, prior knowledge.
    H2c,
}

impl Wire {
    pub fn scheme(self) -> &'static str {
        match self {
            Wire::Http1 | Wire::H2c => "http",
            Wire::Https | Wire::H2 => "https",
        }
    }

    pub fn is_tls(self) -> bool {
        self.scheme() == "https"
    }

    /// What a server of these groups is first spoken to over (its
    /// readiness check): HTTPS for the `tls` group, else HTTP/2 for `h2`
    /// (an HTTP/2-only server has no HTTP/1.1), h2c for `h2c`.
    pub fn of_server(groups: &[Group]) -> Wire {
        if groups.contains(&Group::Tls) {
            Wire::Https
        } else if groups.contains(&Group::H2) {
            Wire::H2
        } else if groups.contains(&Group::H2c) {
            Wire::H2c
        } else {
            Wire::Http1
        }
    }

    /// What a table's measurement of a server of these groups speaks.
    pub fn of_cell(table: Table, groups: &[Group]) -> Wire {
        match table {
            Table::Tls => Wire::Https,
            Table::H2 if groups.contains(&Group::H2) => Wire::H2,
            Table::H2 => Wire::H2c,
            _ => Wire::Http1,
        }
    }

    /// The HTTP version curl must report (`%{http_version}`).
    fn version(self) -> &'static str {
        match self {
            Wire::Http1 | Wire::Https => "1.1",
            Wire::H2 | Wire::H2c => "2",
        }
    }

    fn curl_flag(self) -> &'static str {
        match self {
            Wire::Http1 | Wire::Https => "--http1.1",
            Wire::H2 => "--http2",
            Wire::H2c => "--http2-prior-knowledge",
        }
    }
}

/// Written by curl after the body: status and HTTP version.
const MARK: &str = "\n--cove-bench-reply-- ";

/// curl's arguments for one request (no retries, 10 s at most).
pub fn curl_args(wire: Wire, method: &str, url: &str, body: Option<&str>) -> Vec<String> {
    let mut a: Vec<String> = [
        "-sS",
        "--insecure",
        wire.curl_flag(),
        "--max-time",
        "10",
        "-X",
        method,
        "-w",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("{MARK}%{{http_code}} %{{http_version}}"));
    if let Some(b) = body {
        a.extend([
            "-H".into(),
            "Content-Type: application/json".into(),
            "--data-binary".into(),
            b.into(),
        ]);
    }
    a.push(url.into());
    a
}

/// Status and body from curl's output, checking the protocol it spoke.
pub fn parse_curl(out: &str, wire: Wire) -> Result<Reply> {
    let (body, tail) = out
        .rsplit_once(MARK)
        .ok_or_else(|| anyhow!("no reply from curl: {out:?}"))?;
    let mut it = tail.split_whitespace();
    let status: u16 = it
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| anyhow!("curl: bad status in {tail:?}"))?;
    let version = it.next().unwrap_or("");
    if status == 0 {
        bail!("no response");
    }
    if version != wire.version() {
        bail!(
            "answered over HTTP/{version}, not HTTP/{} ({wire:?})",
            wire.version()
        );
    }
    Ok(Reply {
        status,
        body: body.to_string(),
    })
}

/// One request with curl over `wire` (not `Wire::Http1`: servers.rs).
pub fn request(
    wire: Wire,
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<Reply> {
    let url = format!("{}://{addr}{path}", wire.scheme());
    let out = Command::new("curl")
        .args(curl_args(wire, method, &url, body))
        .stdin(Stdio::null())
        .output()
        .context("cannot run curl (apt-get install curl)")?;
    if !out.status.success() {
        bail!(
            "curl {url}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    parse_curl(&String::from_utf8_lossy(&out.stdout), wire)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_and_cells_pick_their_wire() {
        assert_eq!(Wire::of_server(&[Group::Http]), Wire::Http1);
        assert_eq!(Wire::of_server(&[Group::Tls, Group::H2]), Wire::Https);
        assert_eq!(Wire::of_server(&[Group::H2]), Wire::H2);
        assert_eq!(Wire::of_server(&[Group::H2c]), Wire::H2c);
        let both = [Group::Tls, Group::H2];
        assert_eq!(Wire::of_cell(Table::Tls, &both), Wire::Https);
        assert_eq!(Wire::of_cell(Table::H2, &both), Wire::H2);
        assert_eq!(Wire::of_cell(Table::H2, &[Group::H2c]), Wire::H2c);
        assert_eq!(Wire::of_cell(Table::Hello, &[Group::Http]), Wire::Http1);
        assert_eq!((Wire::H2c.scheme(), Wire::H2.scheme()), ("http", "https"));
        assert!(Wire::Https.is_tls() && !Wire::H2c.is_tls());
    }

    #[test]
    fn curl_arguments() {
        let a = curl_args(Wire::H2c, "POST", "http://x/echo", Some("{}"));
        assert!(a.contains(&"--http2-prior-knowledge".to_string()));
        assert!(a.contains(&"--insecure".to_string()));
        assert_eq!(a.last().unwrap(), "http://x/echo");
        let i = a.iter().position(|s| s == "--data-binary").unwrap();
        assert_eq!(a[i + 1], "{}");
        let g = curl_args(Wire::Https, "GET", "https://x/", None);
        assert!(g.contains(&"--http1.1".to_string()));
        assert!(!g.contains(&"--data-binary".to_string()));
    }

    #[test]
    fn replies_and_their_protocol() {
        let out = format!("Hello World!{MARK}200 2");
        let r = parse_curl(&out, Wire::H2).unwrap();
        assert_eq!((r.status, r.body.as_str()), (200, "Hello World!"));
        // A server that fell back to HTTP/1.1 fails the HTTP/2 check.
        let e = parse_curl(&format!("hi{MARK}200 1.1"), Wire::H2).unwrap_err();
        assert!(e.to_string().contains("HTTP/1.1"), "{e}");
        let r = parse_curl(&format!("x{MARK}404 1.1"), Wire::Https).unwrap();
        assert_eq!(r.status, 404);
        assert!(parse_curl(&format!("{MARK}000 0"), Wire::Https).is_err());
        assert!(parse_curl("garbage", Wire::Https).is_err());
    }
}
