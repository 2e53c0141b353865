//! The probes, each one promise of docs/security.md at full size.

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::Result;

use super::conns::{self, percentile};
use super::{Ctx, Finding};
use crate::procstat::{clk_tck, tree_rss_kib, tree_ticks};
use crate::wrk;

/// 2,000 connections trickling a header that never ends, while a normal
/// client is answered (within 100 ms, the promise); and what an idle
/// kept-alive connection costs in server memory.
pub fn slow_clients(ctx: &Ctx) -> Result<Finding> {
    const N: usize = 2000;
    let server = ctx.serve("slow", &[], None)?;
    let before = tree_rss_kib(server.pid).0;
    let idle = conns::kept_alive(&server.addr, N)?;
    std::thread::sleep(Duration::from_millis(300));
    let per_conn = (tree_rss_kib(server.pid).0.saturating_sub(before)) as f64 / N as f64;
    drop(idle);

    // Well inside the 10 s header timeout, so none is cut off meanwhile.
    let until = Instant::now() + Duration::from_secs(6);
    let addr = server.addr.clone();
    let slow =
        std::thread::spawn(move || conns::trickle(&addr, N, Duration::from_millis(500), until));
    std::thread::sleep(Duration::from_secs(2));
    let mut ms = conns::normal_client(&server.addr, 300)?;
    let still_open = slow
        .join()
        .map_err(|_| anyhow::anyhow!("slow clients panicked"))??;
    let (p50, p99) = (percentile(&mut ms, 50.0), percentile(&mut ms, 99.0));
    let max = ms.iter().copied().fold(0.0, f64::max);
    Ok(Finding {
        probe: "slow-clients",
        figure: format!(
            "{still_open}/{N} trickling connections open; a normal client: p50 {p50:.2} ms, \
             p99 {p99:.2} ms, max {max:.2} ms over 300 requests; an idle kept-alive \
             connection: {per_conn:.1} KiB of server memory"
        ),
        held: p99 <= 100.0 && server.alive(),
    })
}

/// 1,000 concurrent connections on /json for the run's duration (60 s from
/// tools/stress): no non-2xx answers, no socket errors but wrk's timeouts.
pub fn load(ctx: &Ctx) -> Result<Finding> {
    let server = ctx.serve("load", &[], None)?;
    let seconds = ctx.cfg.seconds;
    let (r, _) = wrk::run(&wrk::Load {
        url: format!("http://{}/json", server.addr),
        seconds,
        connections: 1000,
        core: 1,
        script: None,
        http2: false,
        ws: None,
    })?;
    let e = r.socket_errors;
    let (rss, peak) = tree_rss_kib(server.pid);
    Ok(Finding {
        probe: "load",
        figure: format!(
            "1000 connections × {seconds} s on /json: {:.0} req/s, {} requests, {} non-2xx, \
             socket errors connect {} read {} write {} timeout {}; server RSS {} MiB (peak {} MiB)",
            r.req_per_sec,
            r.requests,
            r.non_2xx,
            e.connect,
            e.read,
            e.write,
            e.timeout,
            rss / 1024,
            peak / 1024
        ),
        held: r.non_2xx == 0 && e.connect + e.read + e.write == 0 && server.alive(),
    })
}

/// The server's file descriptors run out (`ulimit -n 64`): it must neither
/// spin nor die, and serve again once connections close.
pub fn fd_limit(ctx: &Ctx) -> Result<Finding> {
    const N: usize = 200;
    let server = ctx.serve("fdlimit", &["-w", "1"], Some(64))?;
    let mut held_open = Vec::new();
    for _ in 0..N {
        if let Ok(mut s) = TcpStream::connect(&server.addr) {
            let _ = s.write_all(b"GET /hello HTTP/1.1\r\nHost: stress\r\n\r\n");
            held_open.push(s);
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    let ticks = tree_ticks(server.pid);
    let window = Duration::from_secs(3);
    std::thread::sleep(window);
    let cpu_pct =
        (tree_ticks(server.pid) - ticks) as f64 / clk_tck()? as f64 / window.as_secs_f64() * 100.0;
    let alive_at_limit = server.alive();
    drop(held_open);
    std::thread::sleep(Duration::from_secs(1));
    let after = server.request("GET", "/hello", None).map(|r| r.status).ok();
    let warnings = std::fs::read_to_string(&server.log)
        .unwrap_or_default()
        .matches("accept failed")
        .count();
    Ok(Finding {
        probe: "fd-limit",
        figure: format!(
            "ulimit -n 64, {N} connections: server CPU {cpu_pct:.1}% of a core at the limit, \
             alive {alive_at_limit}, {warnings} accept-failure log line(s), after they closed: {}",
            after.map_or("no answer".to_string(), |s| format!("{s}"))
        ),
        held: alive_at_limit && after == Some(200) && cpu_pct < 50.0,
    })
}

/// Handlers that allocate without bound, loop and recurse, 20 of each
/// across the workers: each a 500, the server keeps serving, and its memory
/// returns under the heap caps; a 100,000-deep JSON document is an error.
pub fn hostile_handlers(ctx: &Ctx) -> Result<Finding> {
    let server = ctx.serve("hostile", &["-m", "64m", "-w", "2"], None)?;
    let mut statuses = Vec::new();
    let t = Instant::now();
    for path in ["/alloc", "/loop", "/recurse"] {
        for _ in 0..20 {
            statuses.push((
                path,
                server.request("GET", path, None).map(|r| r.status).ok(),
            ));
        }
    }
    let took = t.elapsed().as_secs_f64();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_reply = server.request("POST", "/deep", Some(&deep));
    let deep_ok = deep_reply
        .as_ref()
        .is_ok_and(|r| r.status == 200 && r.body.contains("\"ok\":false"));
    let (rss, peak) = tree_rss_kib(server.pid);
    let all_500 = statuses.iter().all(|(_, s)| *s == Some(500));
    let serving = server
        .request("GET", "/json", None)
        .is_ok_and(|r| r.status == 200);
    // Two VMs capped at 64 MiB each, plus the runtime's own.
    let bound_kib = 2 * 64 * 1024 + 64 * 1024;
    Ok(Finding {
        probe: "hostile",
        figure: format!(
            "60 runaway handlers (alloc, loop, recurse) in {took:.1} s: {} answered 500; \
             100k-deep JSON: {}; server RSS after {} MiB (peak {} MiB, bound {} MiB); serving after: {serving}",
            statuses.iter().filter(|(_, s)| *s == Some(500)).count(),
            if deep_ok { "an error" } else { "NOT an error" },
            rss / 1024,
            peak / 1024,
            bound_kib / 1024
        ),
        held: all_500 && deep_ok && serving && rss <= bound_kib,
    })
}
