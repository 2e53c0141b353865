//! Running wrk and parsing its report.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::servers;

/// `Socket errors: connect a, read b, write c, timeout d`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketErrors {
    pub connect: u64,
    pub read: u64,
    pub write: u64,
    pub timeout: u64,
}

impl SocketErrors {
    pub fn total(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout
    }
}

/// The numbers of one wrk run. Times are in milliseconds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WrkResult {
    pub requests: u64,
    pub duration_s: f64,
    pub req_per_sec: f64,
    pub latency_avg_ms: Option<f64>,
    /// `(percent, ms)` from `--latency`, e.g. `(99.0, 1.25)`.
    pub percentiles: Vec<(f64, f64)>,
    pub non_2xx: u64,
    pub socket_errors: SocketErrors,
}

impl WrkResult {
    pub fn percentile(&self, pct: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(p, _)| (p - pct).abs() < 1e-9)
            .map(|&(_, ms)| ms)
    }
}

/// A wrk time such as `425.12us`, `1.02ms`, `1.24s` or `1.00m`, in ms.
pub fn parse_time_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic())?;
    let value: f64 = s[..split].parse().ok()?;
    let scale = match &s[split..] {
        "us" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        "m" => 60e3,
        "h" => 3600e3,
        _ => return None,
    };
    Some(value * scale)
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T> {
    s.trim()
        .trim_end_matches(',')
        .parse()
        .map_err(|_| anyhow!("wrk output: bad {what} {s:?}"))
}

fn parse_socket_errors(rest: &str) -> Result<SocketErrors> {
    let mut e = SocketErrors::default();
    for part in rest.split(',') {
        let mut it = part.split_whitespace();
        let (Some(name), Some(n)) = (it.next(), it.next()) else {
            bail!("wrk output: bad socket errors {rest:?}");
        };
        let n: u64 = num(n, "socket error count")?;
        match name {
            "connect" => e.connect = n,
            "read" => e.read = n,
            "write" => e.write = n,
            "timeout" => e.timeout = n,
            _ => bail!("wrk output: unknown socket error kind {name:?}"),
        }
    }
    Ok(e)
}

/// Parse wrk 4.x output (with or without `--latency`).
pub fn parse(out: &str) -> Result<WrkResult> {
    let mut r = WrkResult::default();
    let (mut saw_requests, mut saw_rate, mut in_dist) = (false, false, false);
    for line in out.lines() {
        let t = line.trim();
        let tokens: Vec<&str> = t.split_whitespace().collect();
        if t == "Latency Distribution" {
            in_dist = true;
        } else if in_dist && tokens.len() == 2 && tokens[0].ends_with('%') {
            let pct: f64 = num(tokens[0].trim_end_matches('%'), "percentile")?;
            let ms = parse_time_ms(tokens[1])
                .ok_or_else(|| anyhow!("wrk output: bad latency {:?}", tokens[1]))?;
            r.percentiles.push((pct, ms));
        } else if tokens.first() == Some(&"Latency") && tokens.len() >= 2 {
            r.latency_avg_ms = parse_time_ms(tokens[1]);
        } else if tokens.len() >= 4 && tokens[1] == "requests" && tokens[2] == "in" {
            in_dist = false;
            r.requests = num(tokens[0], "request count")?;
            r.duration_s = parse_time_ms(tokens[3].trim_end_matches(','))
                .ok_or_else(|| anyhow!("wrk output: bad duration {:?}", tokens[3]))?
                / 1e3;
            saw_requests = true;
        } else if let Some(n) = t.strip_prefix("Non-2xx or 3xx responses:") {
            r.non_2xx = num(n, "non-2xx count")?;
        } else if let Some(rest) = t.strip_prefix("Socket errors:") {
            r.socket_errors = parse_socket_errors(rest)?;
        } else if let Some(v) = t.strip_prefix("Requests/sec:") {
            r.req_per_sec = num(v, "Requests/sec")?;
            saw_rate = true;
        }
    }
    if !saw_requests || !saw_rate {
        let first = out.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        bail!("wrk produced no result (first line: {first:?})");
    }
    Ok(r)
}

/// One wrk invocation: `taskset -c CORE wrk -t1 -cN -dDs --latency`.
pub struct Load<'a> {
    pub url: String,
    pub seconds: u64,
    pub connections: u32,
    pub core: u32,
    pub script: Option<&'a Path>,
    /// HTTP/2: h2load instead of wrk (the `h2` table).
    pub http2: bool,
    /// WebSocket: cove-bench's own client instead of wrk (the `ws` table).
    pub ws: Option<crate::wsload::WsTarget>,
}

/// Run a load tool's command (stdout and stderr piped) to completion,
/// tracked for clean-up and killed past `limit_secs`; its output and
/// errors once it succeeded. Its output (a few KB) fits in the pipe, so it
/// is read once the tool has exited.
pub fn run_tool(mut cmd: Command, name: &str, limit_secs: u64) -> Result<(String, String)> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `taskset ... {name}`"))?;
    let pid = child.id();
    servers::track(pid);
    let deadline = Instant::now() + Duration::from_secs(limit_secs);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            servers::untrack(pid);
            bail!("{name} did not finish within {limit_secs} s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    servers::untrack(pid);
    let (mut out, mut err) = (String::new(), String::new());
    if let Some(mut s) = child.stdout.take() {
        s.read_to_string(&mut out)?;
    }
    if let Some(mut s) = child.stderr.take() {
        s.read_to_string(&mut err)?;
    }
    if !status.success() {
        bail!("{name} failed ({status}): {}{}", out.trim(), err.trim());
    }
    Ok((out, err))
}

/// Run wrk (h2load for `http2`) to completion (killed if it overruns by
/// 20 s); returns the parsed result and the raw output.
pub fn run(load: &Load) -> Result<(WrkResult, String)> {
    if load.http2 {
        return crate::h2load::run(load);
    }
    if let Some(target) = load.ws {
        return crate::wsload::run(load, target);
    }
    let mut cmd = Command::new("taskset");
    cmd.arg("-c")
        .arg(load.core.to_string())
        .arg("wrk")
        .arg("-t1")
        .arg(format!("-c{}", load.connections))
        .arg(format!("-d{}s", load.seconds))
        .args(["--latency", "--timeout", "2s"]);
    if let Some(script) = load.script {
        cmd.arg("-s").arg(script);
    }
    cmd.arg(&load.url);
    let (out, err) = run_tool(cmd, "wrk", load.seconds + 20)?;
    let parsed = parse(&out).with_context(|| format!("{}{}", out.trim(), err.trim()))?;
    Ok((parsed, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: &str = include_str!("testdata/wrk_latency_ms.txt");
    const NON2XX: &str = include_str!("testdata/wrk_non2xx_us.txt");
    const SECS: &str = include_str!("testdata/wrk_latency_s.txt");
    const TIMEOUTS: &str = include_str!("testdata/wrk_timeouts.txt");
    const PLAIN: &str = include_str!("testdata/wrk_no_latency.txt");
    const COVE: &str = include_str!("testdata/wrk_cove_k.txt");

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn times_with_units() {
        assert!(close(parse_time_ms("425.12us").unwrap(), 0.42512));
        assert!(close(parse_time_ms("1.02ms").unwrap(), 1.02));
        assert!(close(parse_time_ms("1.24s ").unwrap(), 1240.0));
        assert!(close(parse_time_ms("1.50m").unwrap(), 90_000.0));
        assert_eq!(parse_time_ms("12"), None);
        assert_eq!(parse_time_ms("3.0xs"), None);
    }

    #[test]
    fn latency_in_ms() {
        let r = parse(MS).unwrap();
        assert_eq!(r.requests, 781);
        assert!(close(r.duration_s, 1.10));
        assert!(close(r.req_per_sec, 710.45));
        assert!(close(r.latency_avg_ms.unwrap(), 7.07));
        assert_eq!(r.percentiles.len(), 4);
        assert!(close(r.percentile(50.0).unwrap(), 5.55));
        assert!(close(r.percentile(99.0).unwrap(), 20.43));
        assert_eq!(r.non_2xx, 0);
        assert_eq!(r.socket_errors.total(), 0);
    }

    #[test]
    fn non_2xx_and_microseconds() {
        let r = parse(NON2XX).unwrap();
        assert_eq!(r.requests, 1385);
        assert_eq!(r.non_2xx, 1385);
        assert!(close(r.percentile(50.0).unwrap(), 0.751));
        assert!(close(r.percentile(99.0).unwrap(), 7.93));
    }

    #[test]
    fn latency_in_seconds() {
        let r = parse(SECS).unwrap();
        assert_eq!(r.requests, 8);
        assert!(close(r.percentile(50.0).unwrap(), 1240.0));
        assert!(close(r.latency_avg_ms.unwrap(), 1220.0));
    }

    #[test]
    fn socket_errors() {
        let r = parse(TIMEOUTS).unwrap();
        assert_eq!(r.requests, 6);
        let want = SocketErrors {
            timeout: 6,
            ..SocketErrors::default()
        };
        assert_eq!(r.socket_errors, want);
        assert!(close(r.req_per_sec, 3.0));
    }

    #[test]
    fn without_latency_flag() {
        let r = parse(PLAIN).unwrap();
        assert_eq!(r.requests, 1574);
        assert!(r.percentiles.is_empty());
        assert_eq!(r.percentile(99.0), None);
    }

    #[test]
    fn cove_output_with_k_rates() {
        let r = parse(COVE).unwrap();
        assert!(r.requests > 100_000);
        assert!(r.req_per_sec > 10_000.0);
        assert!(r.percentile(99.0).is_some());
    }

    #[test]
    fn connection_refused_is_an_error() {
        let e = parse("unable to connect to 127.0.0.1:1 Connection refused\n").unwrap_err();
        assert!(e.to_string().contains("unable to connect"));
    }
}
