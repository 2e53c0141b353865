//! Many plain TCP connections to one server: kept-alive ones that sent one
//! request, and slow ones that never finish their header.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

const HELLO: &[u8] = b"GET /hello HTTP/1.1\r\nHost: stress\r\n\r\n";

/// `n` connections, each having sent one request and read its answer, left
/// open (keep-alive) for as long as the Vec lives.
pub fn kept_alive(addr: &str, n: usize) -> Result<Vec<TcpStream>> {
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = TcpStream::connect(addr).with_context(|| format!("connection {i}"))?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.write_all(HELLO)?;
        read_one(&mut s).with_context(|| format!("connection {i}: no answer"))?;
        conns.push(s);
    }
    Ok(conns)
}

/// Read one `Hello World!` response (the stress app's /hello).
fn read_one(s: &mut TcpStream) -> Result<()> {
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.ends_with(b"Hello World!") {
        let n = s.read(&mut buf)?;
        anyhow::ensure!(n > 0, "closed before the answer");
        got.extend_from_slice(&buf[..n]);
    }
    Ok(())
}

/// `n` connections that sent a request line and then trickle a header line
/// every `every`, never ending the header, until `until`.
pub fn trickle(addr: &str, n: usize, every: Duration, until: Instant) -> Result<usize> {
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        let mut s = TcpStream::connect(addr).with_context(|| format!("slow connection {i}"))?;
        s.write_all(b"GET /hello HTTP/1.1\r\nHost: stress\r\n")?;
        conns.push(s);
    }
    let mut line = 0u64;
    while Instant::now() < until {
        std::thread::sleep(every);
        line += 1;
        let header = format!("X-Slow-{line}: {line}\r\n");
        // A server that cut one off (its header timeout) is within its rights.
        conns.retain_mut(|s| s.write_all(header.as_bytes()).is_ok());
    }
    Ok(conns.len())
}

/// Latencies (ms) of `n` requests made one after another, each on a fresh
/// connection, as a normal client would.
pub fn normal_client(addr: &str, n: usize) -> Result<Vec<f64>> {
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let mut s = TcpStream::connect(addr)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        s.write_all(HELLO)?;
        read_one(&mut s)?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(ms)
}

/// The `pct` percentile of `values` (sorted in place).
pub fn percentile(values: &mut [f64], pct: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let i = ((values.len() as f64 - 1.0) * pct / 100.0).round() as usize;
    values.get(i).copied().unwrap_or(f64::NAN)
}
