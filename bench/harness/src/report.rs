//! The markdown report: targets, one section per table, memory and size,
//! what was skipped, and notes on noise and errors.

use crate::machine::Machine;
use crate::plan::{Kind, ServerDef};
use crate::runner::{Cell, Run};
use crate::summary::{speed_factors, summarize_cell, CellSummary};
use crate::targets::{self, Verdict};
use crate::workloads::{workload, Table, Workload, TABLES};
use crate::Config;

/// 123456.7 → "123,457".
pub fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.2} ms"))
}

/// 8_500_000 bytes → "8.1 MiB"; KiB counts go through `kib`.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1024.0 / 1024.0)
}

/// The server's name in tables: Cove's rows in bold, worker count when > 1.
pub fn server_name(s: &ServerDef) -> String {
    let workers = if s.workers > 1 {
        format!(" ({} workers)", s.workers)
    } else {
        String::new()
    };
    if s.kind == Kind::Peer {
        format!("{}{workers}", s.label)
    } else {
        format!("**{}**{workers}", s.label)
    }
}

/// The cells of one (table, workload, connections) group, fastest first.
pub fn group<'a>(
    run: &'a Run,
    table: Table,
    w: &Workload,
    connections: Option<u32>,
) -> Vec<(&'a Cell, CellSummary)> {
    let mut cells: Vec<(&Cell, CellSummary)> = run
        .cells
        .iter()
        .filter(|c| c.m.table == table && c.m.workload.name == w.name)
        .filter(|c| connections.is_none_or(|n| c.m.connections == n))
        .map(|c| (c, summarize_cell(run, c)))
        .collect();
    cells.sort_by(|a, b| {
        let r = |s: &CellSummary| s.rps.map_or(0.0, |q| q.median);
        r(&b.1).total_cmp(&r(&a.1))
    });
    cells
}

fn header(cfg: &Config, m: &Machine) -> String {
    let mut out = String::from("# Cove benchmark: latest run\n\n");
    out += &format!(
        "- date: {}; git {}; `{}`; {}\n- machine: {} × {} (nproc {}), {}, kernel {}, {}; CLK_TCK {}\n",
        m.date, m.git, m.cove, m.wrk, m.nproc, m.cpu_model, m.nproc, m.os, m.kernel, m.memory, m.clk_tck
    );
    out += &format!(
        "- method: every server is started once, in its single-worker configuration (one process, one \
         serving thread), pinned to core {core}; the multi-worker rows use cores {core} and {wrk} with two \
         workers. `wrk -t1 -c{c} --latency --timeout 2s` runs pinned to core {wrk}. Each measurement gets a \
         {warm} s warm-up, then {rounds} interleaved rounds × {secs} s (every measurement once per round){quick}. \
         CPU-µs/req = Δ(utime+stime) of the server's whole process tree ÷ the requests wrk reports. The CPU \
         ratio is the median over rounds of (cell ÷ baseline in the same round), against Cove's scriptless \
         hyper server: in Hull's HTTP table the same request to it (answered with its fixed JSON) measured \
         just before, elsewhere its `/hello` for text routes, its JSON route for the rest. Speed factor = req/s ÷ the \
         slowest server's req/s in the same table. Medians with (min–max) over rounds; p50/p99 are medians of \
         the per-round wrk percentiles. A run during which other processes used more than {noise:.0}% of a \
         core is redone{redo}.\n\n",
        core = cfg.server_core,
        wrk = cfg.wrk_core,
        c = cfg.connections,
        warm = cfg.warmup,
        rounds = cfg.rounds,
        secs = cfg.seconds,
        quick = if cfg.quick { " (`--quick`)" } else { "" },
        noise = cfg.noise_pct,
        redo = if cfg.redos == 1 {
            String::new()
        } else {
            format!(" (up to {} times; the last run is kept)", cfg.redos)
        },
    );
    out
}

fn rps_cell(s: &CellSummary) -> String {
    s.rps.map_or("–".into(), |q| {
        format!(
            "{} ({}–{})",
            thousands(q.median),
            thousands(q.min),
            thousands(q.max)
        )
    })
}

fn ratio_cell(server: &ServerDef, s: &CellSummary) -> String {
    match s.ratio {
        _ if server.kind == Kind::Baseline => "1.00×".to_string(),
        Some(q) => format!("{:.2}× ({:.2}–{:.2})", q.median, q.min, q.max),
        None => "–".to_string(),
    }
}

/// One workload's table: servers fastest first.
fn workload_table(run: &Run, table: Table, w: &Workload, chart: &str) -> String {
    let cells = group(run, table, w, None);
    if cells.is_empty() {
        return String::new();
    }
    let rows_col = w.rows.is_some();
    let ref_col = table.reference().and_then(workload);
    let mut out = format!("### `{}`\n\n![{}]({chart})\n\n", w.label(), w.label());
    out += "| server | req/s median (min–max) | speed factor | p50 | p99 | CPU-µs/req | CPU vs baseline |";
    if let Some(r) = ref_col {
        out += &format!(" CPU vs `{}` |", r.path);
    }
    out += if rows_col { " rows/s |\n" } else { "\n" };
    out += "|---|---:|---:|---:|---:|---:|---:|";
    out += if ref_col.is_some() { "---:|" } else { "" };
    out += if rows_col { "---:|\n" } else { "\n" };
    let factors = speed_factors(
        &cells
            .iter()
            .map(|(_, s)| s.rps.map(|q| q.median))
            .collect::<Vec<_>>(),
    );
    for ((c, s), f) in cells.iter().zip(factors) {
        let server = &run.servers[c.m.server];
        let cpu = s.cpu_us.map_or("–".into(), |q| {
            format!("{:.1} ({:.1}–{:.1})", q.median, q.min, q.max)
        });
        out += &format!(
            "| {} | {} | {} | {} | {} | {cpu} | {} |",
            server_name(server),
            rps_cell(s),
            f.map_or("–".into(), |f| format!("{f:.2}×")),
            ms(s.p50_ms),
            ms(s.p99_ms),
            ratio_cell(server, s),
        );
        if ref_col.is_some() {
            out += &format!(" {} |", summary_cell(s.ref_ratio, "×"));
        }
        if rows_col {
            out += &format!(" {} |", s.rows_per_s.map_or("–".into(), thousands));
        }
        out += "\n";
    }
    out + "\n"
}

/// `12.3 (11.9–13.0)`, or `–`.
fn cpu_cell(q: Option<crate::stats::Summary>) -> String {
    q.map_or("–".into(), |q| {
        format!("{:.1} ({:.1}–{:.1})", q.median, q.min, q.max)
    })
}

/// What the `pg` and `redis` sections say first: the server, the pinning and
/// how the database's CPU is counted.
fn database_intro(run: &Run, table: Table) -> String {
    let mut out = String::new();
    for (t, text) in &run.databases {
        if *t == table {
            out += &format!("Every contender talks to the same {text}. ");
        }
    }
    out += "Single-worker rows: the app server alone on its core, wrk and the database server \
            together on the other; two-worker rows: the app server on both cores. \
            **app CPU-µs/req** is the app server's process tree, as in the other tables; \
            **DB CPU-µs/req** is Δ(utime+stime) of the database server's whole process tree over \
            the same wrk run ÷ the requests wrk counted (PostgreSQL: the postmaster, every \
            backend — a backend that exits is counted through the postmaster's cutime/cstime — \
            and its background processes; Redis: redis-server with its threads): what this \
            contender's requests cost the database, on the core it shares with wrk. **app + DB** \
            is their sum per round (median). **connections**: what each server process holds \
            to the database (a two-worker row holds it twice, but Go's one pool).";
    if table == Table::Pg {
        out += " Cove opens up to four connections per worker (a new one only while every \
                open one is busy) and pipelines the waiting requests' statements on them; the peers get pools of 10, the default of node-postgres, \
                postgres.js and Bun.SQL (pgxpool's MaxConns set to match), 50 wrk connections \
                sharing them. Every contender prepares each statement once per connection.";
    }
    if table == Table::Redis {
        out += " Cove's kv store keeps typed values (`greeting` is stored as `shello` under \
                `cove:kv:greeting`); `kv.incr` without a TTL is one `INCRBY` (with one, an \
                EVALSHA of a script that gives the TTL only to a key it creates). The peers send \
                `GET` and `INCR`.";
    }
    out + "\n\n"
}

/// A `pg` or `redis` workload: the app's and the database's CPU side by side.
fn database_table(run: &Run, table: Table, w: &Workload, chart: &str) -> String {
    let cells = group(run, table, w, None);
    if cells.is_empty() {
        return String::new();
    }
    let mut out = format!("### `{}`\n\n![{}]({chart})\n\n", w.label(), w.label());
    out += "| server | connections | req/s median (min–max) | speed factor | p50 | p99 | app CPU-µs/req | DB CPU-µs/req | app + DB |\n";
    out += "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
    let factors = speed_factors(
        &cells
            .iter()
            .map(|(_, s)| s.rps.map(|q| q.median))
            .collect::<Vec<_>>(),
    );
    for ((c, s), f) in cells.iter().zip(factors) {
        let server = &run.servers[c.m.server];
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            server_name(server),
            server
                .pool
                .iter()
                .find(|(g, _)| table.groups().contains(g))
                .map_or("–", |(_, p)| p.as_str()),
            rps_cell(s),
            f.map_or("–".into(), |f| format!("{f:.2}×")),
            ms(s.p50_ms),
            ms(s.p99_ms),
            cpu_cell(s.cpu_us),
            cpu_cell(s.db_cpu_us),
            cpu_cell(s.total_cpu_us),
        );
    }
    out + "\n"
}

/// `1.23× (1.20–1.30)`, or `–`.
fn summary_cell(q: Option<crate::stats::Summary>, unit: &str) -> String {
    q.map_or("–".into(), |q| {
        format!("{:.2}{unit} ({:.2}–{:.2})", q.median, q.min, q.max)
    })
}

/// The servers of a table's cells, each once, in plan order.
pub fn table_servers(run: &Run, table: Table) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for c in run.cells.iter().filter(|c| c.m.table == table) {
        if !out.contains(&c.m.server) {
            out.push(c.m.server);
        }
    }
    out
}

/// The template table's overview: per server, each route's CPU-µs/req and
/// its ratio to the same server's `/health` (the target).
fn templates_overview(run: &Run) -> String {
    let table = Table::Templates;
    let servers = table_servers(run, table);
    if servers.is_empty() {
        return String::new();
    }
    let ws = table.workloads();
    let mut out = String::from(
        "Cove only: the peers have no template routes. Each route's CPU/request is also \
         divided by the same server's `GET /health` in the same round (median over rounds); \
         the target is `/full` ≤ 2.0× `/health` in both runtimes (Hull: 5.5× Lua, 21.7× JS). \
         Each cell: CPU-µs/req (÷ `/health`).\n\n![CPU per request ÷ /health](templates-ratio.svg)\n\n| server |",
    );
    for w in &ws {
        out += &format!(" `{}` |", w.path);
    }
    out += " `/full` ÷ `/health` |\n|---|";
    out += &"---:|".repeat(ws.len() + 1);
    out += "\n";
    for i in servers {
        out += &format!("| {} |", server_name(&run.servers[i]));
        let summary = |name: &str| {
            run.cells
                .iter()
                .find(|c| c.m.table == table && c.m.server == i && c.m.workload.name == name)
                .map(|c| summarize_cell(run, c))
        };
        for w in &ws {
            let text = summary(w.name).map_or("–".into(), |s| {
                let cpu = s.cpu_us.map_or("–".into(), |q| format!("{:.1}", q.median));
                match s.ref_ratio {
                    Some(r) if Some(w.name) != table.reference() => {
                        format!("{cpu} ({:.2}×)", r.median)
                    }
                    _ => cpu,
                }
            });
            out += &format!(" {text} |");
        }
        let full = summary("tpl-full").and_then(|s| s.ref_ratio);
        out += &format!(" **{}** |\n", summary_cell(full, "×"));
    }
    out + "\n"
}

/// The servers of the sweep, each once, in plan order.
pub fn sweep_servers(run: &Run) -> Vec<usize> {
    table_servers(run, Table::Sweep)
}

/// The sweep: one row per server, req/s · p50 · p99 per connection count.
fn sweep_table(run: &Run) -> String {
    let Some(w) = Table::Sweep.workloads().first().copied() else {
        return String::new();
    };
    let counts: Vec<u32> = Table::Sweep
        .connections()
        .iter()
        .flatten()
        .copied()
        .collect();
    let servers = sweep_servers(run);
    if servers.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "`{}`; each cell: req/s · p50 · p99.\n\n![p50 vs concurrency](sweep-p50.svg)\n![p99 vs concurrency](sweep-p99.svg)\n\n| server |",
        w.label()
    );
    for c in &counts {
        out += &format!(" C = {c} |");
    }
    out += "\n|---|";
    out += &"---:|".repeat(counts.len());
    out += "\n";
    for i in servers {
        out += &format!("| {} |", server_name(&run.servers[i]));
        for &c in &counts {
            let cell = run
                .cells
                .iter()
                .find(|x| x.m.table == Table::Sweep && x.m.server == i && x.m.connections == c);
            let text = cell.map_or("–".into(), |x| {
                let s = summarize_cell(run, x);
                format!(
                    "{} · {} · {}",
                    s.rps.map_or("–".into(), |q| thousands(q.median)),
                    ms(s.p50_ms),
                    ms(s.p99_ms)
                )
            });
            out += &format!(" {text} |");
        }
        out += "\n";
    }
    out + "\n"
}

fn memory_table(run: &Run) -> String {
    let mut out = String::from(
        "| server | version | idle RSS | peak RSS during the run | binary / install size | note |\n\
         |---|---|---:|---:|---:|---|\n",
    );
    for s in &run.servers {
        let Some(mem) = run.memory.get(&s.key) else {
            continue;
        };
        out += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            server_name(s),
            if s.version.is_empty() {
                "–"
            } else {
                &s.version
            },
            mib(mem.idle_kib * 1024),
            mib(mem.peak_kib * 1024),
            s.size.map_or("–".into(), mib),
            s.note.as_deref().unwrap_or("")
        );
    }
    out + "\n"
}

/// The chart file of a table section, relative to the report.
pub fn chart_name(table: Table, w: &Workload) -> String {
    format!("{}-{}.svg", table.key(), w.name)
}

pub fn markdown(cfg: &Config, m: &Machine, run: &Run) -> String {
    let mut out = header(cfg, m);
    out += "## Targets\n\n| target | measured | verdict |\n|---|---|---|\n";
    for t in targets::evaluate(run) {
        let verdict = match t.verdict {
            Verdict::Pass => "pass",
            Verdict::Miss => "**miss**",
            Verdict::NotRun => "not measured",
        };
        out += &format!("| {} | {} | {verdict} |\n", t.what, t.measured);
    }
    out += "\n";
    for (n, table) in TABLES.iter().enumerate() {
        if !run.cells.iter().any(|c| c.m.table == *table) {
            continue;
        }
        out += &format!("## {}. {}\n\n", n + 1, table.title());
        if *table == Table::Sweep {
            out += &sweep_table(run);
            continue;
        }
        if *table == Table::Templates {
            out += &templates_overview(run);
        }
        if *table == Table::Ws {
            out += &crate::report_ws::intro(cfg, run);
            for w in table.workloads() {
                out += &crate::report_ws::table(run, w, &chart_name(*table, w));
            }
            continue;
        }
        out += &crate::report_proto::intro(cfg, run, *table);
        if table.has_database_server() {
            out += &database_intro(run, *table);
            for w in table.workloads() {
                out += &database_table(run, *table, w, &chart_name(*table, w));
            }
            continue;
        }
        for w in table.workloads() {
            out += &workload_table(run, *table, w, &chart_name(*table, w));
        }
    }
    out += &format!("## {}. Memory and size\n\n", TABLES.len() + 1);
    out += &memory_table(run);
    if !run.skipped.is_empty() {
        out += "## Not measured\n\n| what | why |\n|---|---|\n";
        for (what, why) in &run.skipped {
            out += &format!(
                "| {what} | {} |\n",
                why.replace('\n', " ").replace('|', "\\|")
            );
        }
        out += "\n";
    }
    out += "## Notes\n\n";
    for n in notes(cfg, run) {
        out += &format!("- {n}\n");
    }
    out
}

fn notes(cfg: &Config, run: &Run) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(bg) = run.background_pct {
        notes.push(format!(
            "before the warm-up, with the servers idle, other processes used {bg:.0}% of a core"
        ));
    }
    for c in &run.cells {
        let id = c.m.id(&run.servers);
        let rounds = |v: Vec<&crate::runner::Sample>| {
            v.iter()
                .map(|s| format!("{} ({:.0}%)", s.round, s.other_cpu_pct))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !c.discarded.is_empty() {
            notes.push(format!(
                "{id}: other processes used more than {:.0}% of a core in round(s) {}; each was redone {}",
                cfg.noise_pct,
                rounds(c.discarded.iter().collect()),
                if cfg.redos == 1 {
                    "once".to_string()
                } else {
                    format!("(up to {} times)", cfg.redos)
                }
            ));
        }
        let noisy: Vec<_> = c
            .samples
            .iter()
            .filter(|s| s.other_cpu_pct > cfg.noise_pct)
            .collect();
        if !noisy.is_empty() {
            notes.push(format!(
                "{id}: still noisy after the redo, kept: round(s) {}",
                rounds(noisy)
            ));
        }
        let errors = summarize_cell(run, c).errors;
        if errors > 0 {
            notes.push(format!("{id}: {errors} errors (socket errors, or non-2xx responses where none are expected)"));
        }
    }
    notes.extend(crate::report_ws::notes(run));
    notes.push(
        "one wrk thread on one core saturates around 115–125k req/s on the reference machine, so the \
         fastest servers' req/s can be wrk-bound: compare them by CPU-µs/req"
            .into(),
    );
    notes.push(
        "the multi-worker rows share core 1 with wrk (the machine has two cores), so they show how a \
         server spreads over cores, not its peak throughput"
            .into(),
    );
    notes
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
