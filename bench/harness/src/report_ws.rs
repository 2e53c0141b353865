//! The `ws` table in the report: how it is measured, and per workload the
//! messages per second, latency and server CPU per message of each server,
//! with their ratios to Bun's in the same round (the target).

use crate::report::{group, ms, server_name, thousands};
use crate::runner::{Cell, Run};
use crate::stats::{median, summarize, Summary};
use crate::workloads::{Table, Workload};
use crate::wsclient::{MESSAGE_BYTES, SUBSCRIBERS, WINDOW};
use crate::Config;

/// The server every `ws` row is compared with.
pub const BUN: &str = "bun-ws";

/// A client that used this much of its core limited the run itself.
pub const CLIENT_BOUND_PCT: f64 = 90.0;

/// Per round, `f(a) ÷ f(b)` of the samples of the same round.
pub fn round_ratios(a: &Cell, b: &Cell, f: impl Fn(&crate::runner::Sample) -> f64) -> Vec<f64> {
    a.samples
        .iter()
        .filter_map(|x| {
            let y = b.samples.iter().find(|y| y.round == x.round)?;
            let d = f(y);
            (d > 0.0).then(|| f(x) / d)
        })
        .collect()
}

/// Bun's cell of the workload, when it was measured.
pub fn bun_cell<'a>(run: &'a Run, w: &Workload) -> Option<&'a Cell> {
    run.cells.iter().find(|c| {
        c.m.table == Table::Ws && c.m.workload.name == w.name && run.servers[c.m.server].key == BUN
    })
}

/// Median msgs/s ratio to Bun (same rounds) and median CPU-µs/msg ratio.
pub fn vs_bun(run: &Run, cell: &Cell) -> (Option<Summary>, Option<Summary>) {
    let Some(bun) = bun_cell(run, cell.m.workload) else {
        return (None, None);
    };
    (
        summarize(&round_ratios(cell, bun, |s| s.wrk.req_per_sec)),
        summarize(&round_ratios(cell, bun, |s| s.cpu_us_per_req)),
    )
}

/// Median of the load client's own CPU (% of its core) over the rounds.
pub fn client_cpu(cell: &Cell) -> Option<f64> {
    let v: Vec<f64> = cell
        .samples
        .iter()
        .filter_map(|s| s.client_cpu_pct)
        .collect();
    median(&v)
}

/// The paragraph above the table.
pub fn intro(cfg: &Config, run: &Run) -> String {
    if !run.cells.iter().any(|c| c.m.table == Table::Ws) {
        return String::new();
    }
    format!(
        "cove-bench's own load client (`cove-bench --ws-client`): one thread pinned to core \
         {wrk}, with its own framing of RFC 6455 (frames built once, masked with a fixed key; \
         headers parsed in place), so that it does little per message. **echo**: {c} \
         connections to `/echo`, each sending a {b}-byte text message and waiting for its echo \
         before the next; msgs/s are round trips per second, p50/p99 their round-trip times. \
         **broadcast**: {subs} subscribers and one publisher on `/broadcast`, where every \
         connection is subscribed to one topic and every message received is published to it, \
         the sender included (Cove's `app.publish`, Bun's `server.publish` and uWS's \
         `app.publish` include it; the Node and Go peers send to every connection of their \
         set). The publisher keeps at most {win} broadcasts in flight: it sends the next once \
         every subscriber has received an earlier one, so no server queues more than {win} \
         messages for a subscriber (Cove closes a client at 256). msgs/s are deliveries to the \
         {subs} subscribers per second (the publisher's own copies, 1 in {all} of what the \
         server sends, are not counted; CPU-µs/msg divides by the same deliveries); p50/p99 is \
         the time from a broadcast's send to its last delivery. Every connection is open \
         (and every subscriber has received a message) before the measured window; the \
         client reads the server's CPU (its process tree, /proc) at the window's start and \
         end, so handshakes and closes are not in CPU-µs/msg. **vs Bun**: per round, msgs/s \
         ÷ Bun's in the same round (median over rounds); **CPU vs Bun** the same for \
         CPU-µs/msg. **client CPU**: the load client's own CPU over the window, in % of its \
         core; at {bound:.0}% or more the client, not the server, limits msgs/s, and the \
         servers compare by CPU-µs/msg.\n\n",
        wrk = cfg.wrk_core,
        c = cfg.connections,
        b = MESSAGE_BYTES,
        subs = thousands(SUBSCRIBERS as f64),
        all = thousands(SUBSCRIBERS as f64 + 1.0),
        win = WINDOW,
        bound = CLIENT_BOUND_PCT,
    )
}

fn ratio(q: Option<Summary>) -> String {
    q.map_or("–".into(), |q| {
        format!("{:.2}× ({:.2}–{:.2})", q.median, q.min, q.max)
    })
}

/// One workload's table: servers fastest first.
pub fn table(run: &Run, w: &Workload, chart: &str) -> String {
    let cells = group(run, Table::Ws, w, None);
    if cells.is_empty() {
        return String::new();
    }
    let broadcast = crate::wsload::is_broadcast(w);
    let (what, lat) = if broadcast {
        (
            format!("{} subscribers", thousands(SUBSCRIBERS as f64)),
            "send → last delivery",
        )
    } else {
        (
            format!("{} connections", cells[0].0.m.connections),
            "round trip",
        )
    };
    let mut out = format!(
        "### `{}` ({what})\n\n![{}]({chart})\n\n",
        w.label(),
        w.label()
    );
    out += &format!(
        "| server | {}msgs/s median (min–max) | vs Bun | p50 ({lat}) | p99 | CPU-µs/msg | CPU vs Bun | client CPU |\n",
        if broadcast { "delivered " } else { "" }
    );
    out += "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (c, s) in &cells {
        let server = &run.servers[c.m.server];
        let (rate, cpu) = vs_bun(run, c);
        let is_bun = server.key == BUN;
        let rps = s.rps.map_or("–".into(), |q| {
            format!(
                "{} ({}–{})",
                thousands(q.median),
                thousands(q.min),
                thousands(q.max)
            )
        });
        let cpu_us = s.cpu_us.map_or("–".into(), |q| {
            let digits = if q.median < 1.0 { 3 } else { 1 };
            format!("{:.d$} ({:.d$}–{:.d$})", q.median, q.min, q.max, d = digits)
        });
        out += &format!(
            "| {} | {rps} | {} | {} | {} | {cpu_us} | {} | {} |\n",
            server_name(server),
            if is_bun { "1.00×".into() } else { ratio(rate) },
            ms(s.p50_ms),
            ms(s.p99_ms),
            if is_bun { "1.00×".into() } else { ratio(cpu) },
            client_cpu(c).map_or("–".into(), |p| format!("{p:.0}%")),
        );
    }
    out + "\n"
}

/// Notes on the `ws` rows: where the client was the limit.
pub fn notes(run: &Run) -> Vec<String> {
    run.cells
        .iter()
        .filter(|c| c.m.table == Table::Ws)
        .filter_map(|c| {
            let p = client_cpu(c)?;
            (p >= CLIENT_BOUND_PCT).then(|| {
                format!(
                    "{}: the load client used {p:.0}% of its core: its msgs/s is the client's \
                     limit as much as the server's; compare by CPU-µs/msg",
                    c.m.id(&run.servers)
                )
            })
        })
        .collect()
}
