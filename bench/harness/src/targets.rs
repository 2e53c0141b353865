//! The targets the issues set, checked against one run's numbers.

use crate::plan::Kind;
use crate::report::{mib, thousands};
use crate::runner::{Cell, Run};
use crate::summary::{summarize_cell, CellSummary};
use crate::workloads::Table;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Miss,
    NotRun,
}

#[derive(Debug, Clone)]
pub struct Target {
    pub what: String,
    pub measured: String,
    pub verdict: Verdict,
}

fn cell<'a>(
    run: &'a Run,
    table: Table,
    server: &str,
    workload: &str,
    c: Option<u32>,
) -> Option<&'a Cell> {
    run.cells.iter().find(|x| {
        x.m.table == table
            && run.servers[x.m.server].key == server
            && x.m.workload.name == workload
            && c.is_none_or(|c| x.m.connections == c)
    })
}

fn summary(run: &Run, table: Table, server: &str, workload: &str) -> Option<CellSummary> {
    cell(run, table, server, workload, None).map(|c| summarize_cell(run, c))
}

fn verdict(ok: bool) -> Verdict {
    if ok {
        Verdict::Pass
    } else {
        Verdict::Miss
    }
}

fn not_run(what: String) -> Target {
    Target {
        what,
        measured: "–".into(),
        verdict: Verdict::NotRun,
    }
}

/// A Cove runtime: its single-worker server's key and its name in targets.
type Runtime = (&'static str, &'static str);
const LUA: Runtime = ("cove-lua", "Lua");
const JS: Runtime = ("cove-js", "JS");

/// CPU ratio of a Cove runtime's cell against a limit.
fn ratio_target(
    run: &Run,
    (server, name): Runtime,
    table: Table,
    workload: &str,
    limit: f64,
) -> Target {
    let what = format!(
        "Cove {name} `{workload}` ({}) CPU/request ≤ {limit:.2}× raw hyper",
        table.key()
    );
    match summary(run, table, server, workload).and_then(|s| s.ratio) {
        Some(q) => Target {
            what,
            measured: format!("{:.2}×", q.median),
            verdict: verdict(q.median <= limit),
        },
        None => not_run(what),
    }
}

/// The fastest single-worker peer on a Hello-table workload.
fn best_peer(run: &Run, workload: &str) -> Option<(String, f64)> {
    run.cells
        .iter()
        .filter(|c| c.m.table == Table::Hello && c.m.workload.name == workload)
        .filter(|c| run.servers[c.m.server].kind == Kind::Peer)
        .filter_map(|c| {
            Some((
                run.servers[c.m.server].key.clone(),
                summarize_cell(run, c).rps?.median,
            ))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The single-worker peer with the most req/s on a table's workload, with
/// its numbers.
fn fastest_peer(run: &Run, table: Table, workload: &str) -> Option<(String, CellSummary)> {
    run.cells
        .iter()
        .filter(|c| c.m.table == table && c.m.workload.name == workload)
        .filter(|c| {
            let s = &run.servers[c.m.server];
            s.kind == Kind::Peer && s.workers == 1
        })
        .map(|c| (run.servers[c.m.server].key.clone(), summarize_cell(run, c)))
        .filter(|(_, s)| s.rps.is_some())
        .max_by(|a, b| {
            let r = |s: &CellSummary| s.rps.map_or(0.0, |q| q.median);
            r(&a.1).total_cmp(&r(&b.1))
        })
}

/// The `pg` and `redis` tables' targets, per Cove runtime and workload:
/// req/s ≥ the fastest single-worker peer's, and app CPU/request ≤ that
/// peer's, both as ratios (reported, not asserted).
fn database_targets(run: &Run) -> Vec<Target> {
    let mut out = Vec::new();
    for (table, workload) in [
        (Table::Pg, "read"),
        (Table::Pg, "write"),
        (Table::Redis, "get-incr"),
    ] {
        let label = crate::workloads::workload_in(table.groups()[0], workload)
            .map_or(workload.to_string(), |w| format!("{} {}", w.method, w.path));
        for (server, name) in [("cove-lua-pg", "Lua"), ("cove-js-pg", "JS")] {
            let cove = summary(run, table, server, workload);
            let best = fastest_peer(run, table, workload);
            let what = format!(
                "Cove {name} `{label}` ({}) req/s ≥ the fastest peer's (one worker each)",
                table.key()
            );
            out.push(match (cove.as_ref().and_then(|s| s.rps), &best) {
                (Some(c), Some((peer, b))) => {
                    let b = b.rps.map_or(f64::NAN, |q| q.median);
                    Target {
                        what,
                        measured: format!(
                            "{:.2}× ({} vs {} {peer})",
                            c.median / b,
                            thousands(c.median),
                            thousands(b)
                        ),
                        verdict: verdict(c.median >= b),
                    }
                }
                _ => not_run(what),
            });
            let what = format!(
                "Cove {name} `{label}` ({}) app CPU/request ≤ the fastest peer's",
                table.key()
            );
            out.push(match (cove.as_ref().and_then(|s| s.cpu_us), &best) {
                (Some(c), Some((peer, b))) if b.cpu_us.is_some() => {
                    let b = b.cpu_us.map_or(f64::NAN, |q| q.median);
                    Target {
                        what,
                        measured: format!(
                            "{:.2}× ({:.1} vs {:.1} µs {peer})",
                            c.median / b,
                            c.median,
                            b
                        ),
                        verdict: verdict(c.median <= b),
                    }
                }
                _ => not_run(what),
            });
        }
    }
    out
}

/// Per round, `a`'s CPU-µs/req ÷ `b`'s in the same round (a host whose
/// speed drifts over a run moves both); the median over rounds.
fn same_round_ratio(a: &Cell, b: &Cell) -> Option<f64> {
    let ratios: Vec<f64> = a
        .samples
        .iter()
        .filter_map(|x| {
            let y = b.samples.iter().find(|y| y.round == x.round)?;
            Some(x.cpu_us_per_req / y.cpu_us_per_req)
        })
        .collect();
    crate::stats::median(&ratios)
}

/// The `tls` table's target: Cove Lua's `/json` over HTTPS CPU/request
/// ≤ 1.2× nginx + Lua's over HTTPS.
fn tls_target(run: &Run) -> Target {
    let limit = 1.2;
    let what = format!(
        "Cove Lua `/json` over HTTPS (tls) CPU/request ≤ {limit:.2}× nginx+Lua's over HTTPS"
    );
    let cove = cell(run, Table::Tls, "cove-lua-tls", "json", None);
    let nginx = cell(run, Table::Tls, "nginx-lua-tls", "json", None);
    cpu_ratio_target(run, what, cove, nginx, limit, 1)
}

/// `a`'s CPU/request ÷ `b`'s (same-round ratio, median over rounds) ≤
/// `limit`, shown with `digits` decimals.
fn cpu_ratio_target(
    run: &Run,
    what: String,
    a: Option<&Cell>,
    b: Option<&Cell>,
    limit: f64,
    digits: usize,
) -> Target {
    let (Some(a), Some(b)) = (a, b) else {
        return not_run(what);
    };
    let cpu = |c: &Cell| summarize_cell(run, c).cpu_us.map(|q| q.median);
    match (same_round_ratio(a, b), cpu(a), cpu(b)) {
        (Some(q), Some(x), Some(y)) => Target {
            what,
            measured: format!(
                "{q:.ratio$}× ({x:.cpu$} vs {y:.cpu$} µs)",
                ratio = digits + 1,
                cpu = digits
            ),
            verdict: verdict(q <= limit),
        },
        _ => not_run(what),
    }
}

/// Issue 41's budget: with `--metrics` and the JSON access log on, a
/// runtime's `/json` CPU/request ≤ 1.05× the same app's with both off
/// (same-round ratio, median over rounds).
fn observed_targets(run: &Run) -> Vec<Target> {
    let limit = 1.05;
    [LUA, JS]
        .into_iter()
        .map(|(server, name)| {
            let what = format!(
                "Cove {name} `/json` (hello) CPU/request with `--metrics` + JSON access log ≤ {limit:.2}× without"
            );
            let on = cell(run, Table::Hello, &format!("{server}-obs"), "json", None);
            let off = cell(run, Table::Hello, server, "json", None);
            cpu_ratio_target(run, what, on, off, limit, 2)
        })
        .collect()
}

/// The `ws` table's targets (issue 40): Cove Lua's WebSocket echo and
/// broadcast messages/s ≥ Bun's, one worker each, as the median over
/// rounds of the same-round ratio.
fn ws_targets(run: &Run) -> Vec<Target> {
    let mut out = Vec::new();
    for (w, what) in [
        ("echo", "echo round trips"),
        ("broadcast", "broadcast deliveries"),
    ] {
        let what = format!("Cove Lua WebSocket {what}/s ≥ Bun's (ws, one worker each)");
        let cove = cell(run, Table::Ws, "cove-lua-ws", w, None);
        let ratio = cove.and_then(|c| crate::report_ws::vs_bun(run, c).0);
        let rate = |c: Option<&Cell>| Some(summarize_cell(run, c?).rps?.median);
        let bun = cove.and_then(|c| crate::report_ws::bun_cell(run, c.m.workload));
        out.push(match (ratio, rate(cove), rate(bun)) {
            (Some(q), Some(a), Some(b)) => Target {
                what,
                measured: format!("{:.2}× ({} vs {})", q.median, thousands(a), thousands(b)),
                verdict: verdict(q.median >= 1.0),
            },
            _ => not_run(what),
        });
    }
    out
}

pub fn evaluate(run: &Run) -> Vec<Target> {
    let mut out = vec![
        ratio_target(run, LUA, Table::Hello, "json", 1.15),
        ratio_target(run, JS, Table::Hello, "json", 1.25),
    ];
    let cove_json = summary(run, Table::Hello, LUA.0, "json");
    let nginx_json = summary(run, Table::Hello, "nginx-lua", "json");
    let what = "Cove Lua `/json` CPU/request ≤ nginx+Lua's".to_string();
    out.push(
        match (
            cove_json.as_ref().and_then(|s| s.cpu_us),
            nginx_json.and_then(|s| s.cpu_us),
        ) {
            (Some(c), Some(n)) => Target {
                what,
                measured: format!("{:.1} vs {:.1} µs", c.median, n.median),
                verdict: verdict(c.median <= n.median),
            },
            _ => not_run(what),
        },
    );
    let what = "Cove Lua `/json` req/s ≥ every peer (one worker each)".to_string();
    out.push(
        match (cove_json.and_then(|s| s.rps), best_peer(run, "json")) {
            (Some(c), Some((name, best))) => Target {
                what,
                measured: format!("{} vs {} ({name})", thousands(c.median), thousands(best)),
                verdict: verdict(c.median >= best),
            },
            _ => not_run(what),
        },
    );
    let what = "Cove SQLite insert (`GET /`) req/s ≥ 1.5× Bun + bun:sqlite".to_string();
    let cove_insert = summary(run, Table::HullHttp, LUA.0, "insert").and_then(|s| s.rps);
    let bun_insert = summary(run, Table::HullHttp, "bun", "insert").and_then(|s| s.rps);
    out.push(match (cove_insert, bun_insert) {
        (Some(c), Some(b)) => Target {
            what,
            measured: format!(
                "{:.2}× ({} vs {})",
                c.median / b.median,
                thousands(c.median),
                thousands(b.median)
            ),
            verdict: verdict(c.median >= 1.5 * b.median),
        },
        _ => not_run(what),
    });
    let what = "Cove Lua `/hello` p99 ≤ 2 ms at C = 200".to_string();
    out.push(
        match cell(run, Table::Sweep, LUA.0, "hello", Some(200))
            .and_then(|c| summarize_cell(run, c).p99_ms)
        {
            Some(p99) => Target {
                what,
                measured: format!("{p99:.2} ms"),
                verdict: verdict(p99 <= 2.0),
            },
            None => not_run(what),
        },
    );
    let what = "Cove idle RSS ≤ 10 MB".to_string();
    out.push(match run.memory.get(LUA.0) {
        Some(m) => Target {
            what,
            measured: mib(m.idle_kib * 1024),
            verdict: verdict(m.idle_kib * 1024 <= 10_000_000),
        },
        None => not_run(what),
    });
    for w in ["health", "greet", "echo"] {
        out.push(ratio_target(run, LUA, Table::HullHttp, w, 1.15));
    }
    out.push(ratio_target(run, LUA, Table::HullHttp, "insert", 2.0));
    out.push(ratio_target(run, LUA, Table::HullHttp, "select20", 2.0));
    for (server, name) in [("cove-lua-tpl", "Lua"), ("cove-js-tpl", "JS")] {
        let what = format!("Cove {name} template `/full` CPU/request ≤ 2.00× its `/health`");
        out.push(
            match summary(run, Table::Templates, server, "tpl-full").and_then(|s| s.ref_ratio) {
                Some(q) => Target {
                    what,
                    measured: format!("{:.2}×", q.median),
                    verdict: verdict(q.median <= 2.0),
                },
                None => not_run(what),
            },
        );
    }
    out.extend(database_targets(run));
    out.push(tls_target(run));
    out.extend(ws_targets(run));
    out.extend(observed_targets(run));
    out
}
