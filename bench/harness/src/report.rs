//! The result table (markdown) and the raw per-round numbers (JSON).

use serde_json::{json, Value};

use crate::machine::Machine;
use crate::runner::{RowResult, Run, Sample};
use crate::stats::{median, summarize, Summary};
use crate::Config;

/// The numbers of one table row.
#[derive(Debug, Clone, Default)]
pub struct RowSummary {
    pub rps: Option<Summary>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub cpu_us: Option<Summary>,
    /// Per round: route CPU-µs/req ÷ baseline CPU-µs/req of the same round.
    pub ratio: Option<Summary>,
    pub errors: u64,
    pub verdict: String,
}

fn series(samples: &[Sample], f: impl Fn(&Sample) -> Option<f64>) -> Vec<f64> {
    samples.iter().filter_map(f).collect()
}

pub fn summarize_row(r: &RowResult, baseline: Option<&RowResult>) -> RowSummary {
    let s = &r.samples;
    let ratios: Vec<f64> = match baseline {
        Some(b) => s
            .iter()
            .filter_map(|x| {
                let base = b.samples.iter().find(|y| y.round == x.round)?;
                Some(x.cpu_us_per_req / base.cpu_us_per_req)
            })
            .collect(),
        None => Vec::new(),
    };
    let ratio = summarize(&ratios);
    let errors = s
        .iter()
        .map(|x| x.wrk.non_2xx + x.wrk.socket_errors.total())
        .sum();
    let is_baseline = r.row.srv == crate::rows::Srv::Baseline;
    let mut verdict = match (r.row.target, ratio) {
        (None, _) if is_baseline => "— (denominator)".to_string(),
        (None, _) => "— (reference)".to_string(),
        (Some(_), None) => "n/a (no baseline in this run)".to_string(),
        (Some(t), Some(q)) if q.median <= t => "pass".to_string(),
        (Some(_), Some(_)) => "**miss**".to_string(),
    };
    if errors > 0 {
        verdict.push_str(" (errors!)");
    }
    RowSummary {
        rps: summarize(&series(s, |x| Some(x.wrk.req_per_sec))),
        p50_ms: median(&series(s, |x| x.wrk.percentile(50.0))),
        p99_ms: median(&series(s, |x| x.wrk.percentile(99.0))),
        cpu_us: summarize(&series(s, |x| Some(x.cpu_us_per_req))),
        ratio,
        errors,
        verdict,
    }
}

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

fn ms(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.2} ms"))
}

fn baseline_of(results: &[RowResult]) -> Option<&RowResult> {
    results
        .iter()
        .find(|r| r.row.srv == crate::rows::Srv::Baseline)
}

pub fn markdown(cfg: &Config, m: &Machine, run: &Run) -> String {
    let results = &run.rows;
    let mut out = String::from("# Cove benchmark: latest run\n\n");
    out += &format!(
        "- date: {}; git {}; `{}`; {}\n- machine: {} × {} (nproc {}), {}, kernel {}, {}; CLK_TCK {}\n",
        m.date, m.git, m.cove, m.wrk, m.nproc, m.cpu_model, m.nproc, m.os, m.kernel, m.memory, m.clk_tck
    );
    out += &format!(
        "- method: each server runs `--workers 1` pinned to core {}; `wrk -t1 -c{} --latency --timeout 2s` \
         pinned to core {}; {} s warm-up per route, then {} interleaved rounds × {} s{}. \
         CPU-µs/req = Δ(utime+stime) of the server process ÷ requests wrk reports; the ratio is the median \
         over rounds of (route ÷ baseline, same round). Medians with (min–max) over rounds; p50/p99 are medians \
         of the per-round wrk percentiles.\n\n",
        cfg.server_core,
        cfg.connections,
        cfg.wrk_core,
        cfg.warmup,
        cfg.rounds,
        cfg.seconds,
        if cfg.quick { " (`--quick`)" } else { "" }
    );
    out += "| route | req/s median (min–max) | p50 | p99 | CPU-µs/req median (min–max) | CPU ratio vs baseline | target | Hull ref | verdict |\n";
    out += "|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    let base = baseline_of(results);
    for r in results {
        let s = summarize_row(r, base);
        let rps = s.rps.map_or("–".into(), |q| {
            format!(
                "{} ({}–{})",
                thousands(q.median),
                thousands(q.min),
                thousands(q.max)
            )
        });
        let cpu = s.cpu_us.map_or("–".into(), |q| {
            format!("{:.1} ({:.1}–{:.1})", q.median, q.min, q.max)
        });
        let ratio = match s.ratio {
            _ if r.row.srv == crate::rows::Srv::Baseline => "1.00×".to_string(),
            Some(q) => format!("{:.2}× ({:.2}–{:.2})", q.median, q.min, q.max),
            None => "–".to_string(),
        };
        let target = r.row.target.map_or("—".into(), |t| format!("≤ {t:.2}×"));
        out += &format!(
            "| `{} {}` {} | {rps} | {} | {} | {cpu} | {ratio} | {target} | {} | {} |\n",
            r.row.method,
            r.row.path,
            r.row.route,
            ms(s.p50_ms),
            ms(s.p99_ms),
            r.row.hull_ref,
            s.verdict
        );
    }
    let mut notes = Vec::new();
    if let Some(bg) = run.background_pct {
        notes.push(format!(
            "before the warm-up, with the servers idle, other processes used {bg:.0}% of a core"
        ));
    }
    for r in results {
        let list = |v: &[&Sample]| {
            v.iter()
                .map(|s| format!("{} ({:.0}%)", s.round, s.other_cpu_pct))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let redone: Vec<&Sample> = r.discarded.iter().collect();
        if !redone.is_empty() {
            notes.push(format!(
                "{}: other processes used more than {:.0}% of a core in round(s) {}; each was redone once",
                r.row.name,
                cfg.noise_pct,
                list(&redone)
            ));
        }
        let noisy: Vec<&Sample> = r
            .samples
            .iter()
            .filter(|s| s.other_cpu_pct > cfg.noise_pct)
            .collect();
        if !noisy.is_empty() {
            notes.push(format!(
                "{}: still noisy after the redo, kept: round(s) {}",
                r.row.name,
                list(&noisy)
            ));
        }
        for s in r
            .samples
            .iter()
            .filter(|s| s.wrk.non_2xx + s.wrk.socket_errors.total() > 0)
        {
            let e = s.wrk.socket_errors;
            notes.push(format!(
                "{} round {}: {} non-2xx/3xx responses; socket errors connect {}, read {}, write {}, timeout {}",
                r.row.name, s.round, s.wrk.non_2xx, e.connect, e.read, e.write, e.timeout
            ));
        }
    }
    if base.is_none() {
        notes.push("the baseline row was not run (`--only`), so there are no ratios".into());
    }
    notes.push(
        "one wrk thread on one core saturates around 115–125k req/s on the reference machine, so the \
         baseline's req/s can be wrk-bound: compare routes by CPU-µs/req"
            .into(),
    );
    out += "\nNotes:\n";
    for n in notes {
        out += &format!("- {n}\n");
    }
    out
}

fn sample_json(s: &Sample) -> Value {
    let pct: serde_json::Map<String, Value> = s
        .wrk
        .percentiles
        .iter()
        .map(|(p, v)| (format!("{p}"), json!(v)))
        .collect();
    let e = s.wrk.socket_errors;
    json!({
        "round": s.round, "requests": s.wrk.requests, "duration_s": s.wrk.duration_s,
        "req_per_sec": s.wrk.req_per_sec, "latency_avg_ms": s.wrk.latency_avg_ms,
        "latency_percentiles_ms": pct, "non_2xx": s.wrk.non_2xx,
        "socket_errors": {"connect": e.connect, "read": e.read, "write": e.write, "timeout": e.timeout},
        "server_cpu_ticks": s.server_ticks, "cpu_us_per_req": s.cpu_us_per_req,
        "other_cpu_pct_of_core": s.other_cpu_pct, "wall_s": s.wall_s,
    })
}

fn summary_json(s: Option<Summary>) -> Value {
    s.map_or(
        Value::Null,
        |q| json!({"median": q.median, "min": q.min, "max": q.max}),
    )
}

pub fn json(cfg: &Config, m: &Machine, run: &Run) -> Value {
    let results = &run.rows;
    let base = baseline_of(results);
    let rows: Vec<Value> = results
        .iter()
        .map(|r| {
            let s = summarize_row(r, base);
            json!({
                "name": r.row.name, "route": r.row.route, "method": r.row.method, "path": r.row.path,
                "target_ratio": r.row.target, "hull_ref_ratio": r.row.hull_ref,
                "summary": {
                    "req_per_sec": summary_json(s.rps), "p50_ms": s.p50_ms, "p99_ms": s.p99_ms,
                    "cpu_us_per_req": summary_json(s.cpu_us), "cpu_ratio_vs_baseline": summary_json(s.ratio),
                    "errors": s.errors, "verdict": s.verdict,
                },
                "rounds": r.samples.iter().map(sample_json).collect::<Vec<_>>(),
                "discarded": r.discarded.iter().map(sample_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "machine": m.json(),
        "background_other_cpu_pct_of_core": run.background_pct,
        "config": {
            "rounds": cfg.rounds, "seconds": cfg.seconds, "warmup_s": cfg.warmup,
            "connections": cfg.connections, "wrk_threads": 1, "server_core": cfg.server_core,
            "wrk_core": cfg.wrk_core, "workers": 1, "noise_pct_of_core": cfg.noise_pct,
            "quick": cfg.quick, "only": cfg.only,
        },
        "rows": rows,
    })
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
