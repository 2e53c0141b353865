//! Running h2load (nghttp2-client) for the `h2` table and parsing its
//! report into the numbers wrk gives (h2load has no latency percentiles).

use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};

use crate::wrk::{parse_time_ms, Load, SocketErrors, WrkResult};

/// Concurrent streams per connection (`-m`).
pub const STREAMS: u32 = 10;

/// One h2load run's numbers and the protocol it spoke.
#[derive(Debug, Clone, PartialEq)]
pub struct H2Result {
    pub result: WrkResult,
    /// `h2`, `h2c`, or `http/1.1` when the server did not take HTTP/2.
    pub protocol: String,
    /// The TLS cipher it negotiated (TLS only).
    pub cipher: Option<String>,
}

fn count(text: &str, what: &str) -> Result<u64> {
    text.trim()
        .trim_end_matches(',')
        .parse()
        .map_err(|_| anyhow!("h2load output: bad {what} {text:?}"))
}

/// `requests: 100 total, 100 started, 100 done, 90 succeeded, 10 failed,
/// 0 errored, 0 timeout` as (kind, n) pairs.
fn counts(rest: &str) -> Result<Vec<(String, u64)>> {
    rest.split(',')
        .map(|part| {
            let mut it = part.split_whitespace();
            match (it.next(), it.next()) {
                (Some(n), Some(kind)) => Ok((kind.to_string(), count(n, kind)?)),
                _ => bail!("h2load output: bad counts {rest:?}"),
            }
        })
        .collect()
}

fn get(pairs: &[(String, u64)], kind: &str) -> u64 {
    pairs.iter().find(|(k, _)| k == kind).map_or(0, |&(_, n)| n)
}

/// Parse h2load's report (nghttp2 1.52). Requests are those done;
/// non-2xx are the 3xx, 4xx and 5xx responses; errored streams count as
/// read errors, timed-out ones as timeouts; the mean of `time for request`
/// is the average latency.
pub fn parse(out: &str) -> Result<H2Result> {
    let mut r = WrkResult::default();
    let (mut protocol, mut cipher) = (String::new(), None);
    let (mut saw_finished, mut saw_requests) = (false, false);
    for line in out.lines() {
        let t = line.trim();
        if let Some(p) = t.strip_prefix("Application protocol:") {
            protocol = p.trim().to_string();
        } else if let Some(c) = t.strip_prefix("Cipher:") {
            cipher = Some(c.trim().to_string());
        } else if let Some(rest) = t.strip_prefix("finished in ") {
            // `finished in 2.02s, 53643.00 req/s, 2.71MB/s`
            let parts: Vec<&str> = rest.split(',').map(str::trim).collect();
            if parts.len() < 2 {
                bail!("h2load output: bad line {t:?}");
            }
            r.duration_s = parse_time_ms(parts[0])
                .ok_or_else(|| anyhow!("h2load output: bad duration {:?}", parts[0]))?
                / 1e3;
            let rate = parts[1].trim_end_matches("req/s").trim();
            r.req_per_sec = rate
                .parse()
                .map_err(|_| anyhow!("h2load output: bad req/s {rate:?}"))?;
            saw_finished = true;
        } else if let Some(rest) = t.strip_prefix("requests:") {
            let c = counts(rest)?;
            r.requests = get(&c, "done");
            r.socket_errors = SocketErrors {
                read: get(&c, "errored"),
                timeout: get(&c, "timeout"),
                ..SocketErrors::default()
            };
            saw_requests = true;
        } else if let Some(rest) = t.strip_prefix("status codes:") {
            let c = counts(rest)?;
            r.non_2xx = get(&c, "3xx") + get(&c, "4xx") + get(&c, "5xx");
        } else if let Some(rest) = t.strip_prefix("time for request:") {
            // min, max, mean, sd, +/- sd
            r.latency_avg_ms = rest.split_whitespace().nth(2).and_then(parse_time_ms);
        }
    }
    if !saw_finished || !saw_requests {
        let first = out.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        bail!("h2load produced no result (first line: {first:?})");
    }
    Ok(H2Result {
        result: r,
        protocol,
        cipher,
    })
}

/// `taskset -c CORE h2load -D S -c N -m STREAMS -t 1 URL`.
pub fn args(load: &Load) -> Vec<String> {
    vec![
        "-c".into(),
        load.core.to_string(),
        "h2load".into(),
        "-D".into(),
        load.seconds.to_string(),
        "-c".into(),
        load.connections.to_string(),
        "-m".into(),
        STREAMS.to_string(),
        "-t".into(),
        "1".into(),
        load.url.clone(),
    ]
}

/// Run h2load to completion (killed if it overruns by 20 s); fails unless
/// it spoke HTTP/2 (`h2` or `h2c`).
pub fn run(load: &Load) -> Result<(WrkResult, String)> {
    let mut cmd = Command::new("taskset");
    cmd.args(args(load));
    let (out, err) = crate::wrk::run_tool(cmd, "h2load", load.seconds + 20)?;
    let parsed = parse(&out).with_context(|| format!("{}{}", out.trim(), err.trim()))?;
    if parsed.protocol != "h2" && parsed.protocol != "h2c" {
        bail!(
            "h2load spoke {:?} to {}, not HTTP/2",
            parsed.protocol,
            load.url
        );
    }
    Ok((parsed.result, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TLS: &str = include_str!("testdata/h2load_tls.txt");
    const H2C: &str = include_str!("testdata/h2load_h2c.txt");
    const REFUSED: &str = include_str!("testdata/h2load_refused.txt");
    const NOT_FOUND: &str = include_str!("testdata/h2load_404.txt");
    const FALLBACK: &str = include_str!("testdata/h2load_http1_fallback.txt");

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn a_timed_run_over_tls() {
        let p = parse(TLS).unwrap();
        assert_eq!(p.protocol, "h2");
        assert_eq!(p.cipher.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        let r = p.result;
        assert_eq!(r.requests, 107_286);
        assert!(close(r.duration_s, 2.02));
        assert!(close(r.req_per_sec, 53_643.0));
        assert!(close(r.latency_avg_ms.unwrap(), 7.87));
        assert!(r.percentiles.is_empty());
        assert_eq!((r.non_2xx, r.socket_errors.total()), (0, 0));
    }

    #[test]
    fn h2c_without_a_cipher() {
        let p = parse(H2C).unwrap();
        assert_eq!(p.protocol, "h2c");
        assert_eq!(p.cipher, None);
        assert_eq!(p.result.requests, 42_493);
        assert!(close(p.result.latency_avg_ms.unwrap(), 2.24));
    }

    #[test]
    fn errors_and_non_2xx() {
        let r = parse(REFUSED).unwrap().result;
        assert_eq!(r.requests, 0);
        assert_eq!(r.socket_errors.read, 100);
        assert!(close(r.duration_s, 0.000233));
        let n = parse(NOT_FOUND).unwrap().result;
        assert_eq!((n.requests, n.non_2xx), (200, 200));
        assert_eq!(n.socket_errors.total(), 0);
    }

    #[test]
    fn a_fallback_to_http1_is_reported() {
        let p = parse(FALLBACK).unwrap();
        assert_eq!(p.protocol, "http/1.1");
        assert_eq!(p.result.requests, 100);
    }

    #[test]
    fn no_report_is_an_error() {
        assert!(parse("starting benchmark...\n").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn arguments() {
        let load = Load {
            url: "https://127.0.0.1:9/json".into(),
            seconds: 5,
            connections: 50,
            core: 1,
            script: None,
            http2: true,
            ws: None,
        };
        assert_eq!(
            args(&load).join(" "),
            "-c 1 h2load -D 5 -c 50 -m 10 -t 1 https://127.0.0.1:9/json"
        );
    }
}
