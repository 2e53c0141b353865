//! The raw results as JSON: every round of every cell, with the summaries.

use serde_json::{json, Value};

use crate::machine::Machine;
use crate::runner::{Run, Sample};
use crate::stats::Summary;
use crate::summary::summarize_cell;
use crate::targets::{self, Verdict};
use crate::Config;

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
        "db_cpu_ticks": s.db_ticks, "db_cpu_us_per_req": s.db_cpu_us_per_req,
        "other_cpu_pct_of_core": s.other_cpu_pct, "wall_s": s.wall_s,
        "client_cpu_pct_of_core": s.client_cpu_pct,
    })
}

fn summary_json(s: Option<Summary>) -> Value {
    s.map_or(
        Value::Null,
        |q| json!({"median": q.median, "min": q.min, "max": q.max}),
    )
}

pub fn json(cfg: &Config, m: &Machine, run: &Run) -> Value {
    let servers: Vec<Value> = run
        .servers
        .iter()
        .map(|s| {
            let mem = run.memory.get(&s.key);
            json!({
                "key": s.key, "label": s.label, "workers": s.workers, "version": s.version,
                "size_bytes": s.size, "note": s.note,
                "pool": s.pool.iter().map(|(g, p)| (format!("{g:?}").to_lowercase(), json!(p))).collect::<serde_json::Map<_, _>>(),
                "idle_rss_kib": mem.map(|m| m.idle_kib), "peak_rss_kib": mem.map(|m| m.peak_kib),
            })
        })
        .collect();
    let cells: Vec<Value> = run
        .cells
        .iter()
        .map(|c| {
            let s = summarize_cell(run, c);
            json!({
                "id": c.m.id(&run.servers), "table": c.m.table.key(), "server": run.servers[c.m.server].key,
                "workload": c.m.workload.name, "request": c.m.workload.label(), "connections": c.m.connections,
                "summary": {
                    "req_per_sec": summary_json(s.rps), "p50_ms": s.p50_ms, "p99_ms": s.p99_ms,
                    "cpu_us_per_req": summary_json(s.cpu_us), "cpu_ratio_vs_baseline": summary_json(s.ratio),
                    "reference": c.m.table.reference(), "cpu_ratio_vs_reference": summary_json(s.ref_ratio),
                    "rows_per_sec": s.rows_per_s, "errors": s.errors,
                    "db_cpu_us_per_req": summary_json(s.db_cpu_us),
                    "app_plus_db_cpu_us_per_req": summary_json(s.total_cpu_us),
                },
                "rounds": c.samples.iter().map(sample_json).collect::<Vec<_>>(),
                "discarded": c.discarded.iter().map(sample_json).collect::<Vec<_>>(),
            })
        })
        .collect();
    let targets: Vec<Value> = targets::evaluate(run)
        .iter()
        .map(|t| {
            let v = match t.verdict {
                Verdict::Pass => "pass",
                Verdict::Miss => "miss",
                Verdict::NotRun => "not measured",
            };
            json!({"target": t.what, "measured": t.measured, "verdict": v})
        })
        .collect();
    json!({
        "machine": m.json(),
        "background_other_cpu_pct_of_core": run.background_pct,
        "config": {
            "rounds": cfg.rounds, "seconds": cfg.seconds, "warmup_s": cfg.warmup,
            "connections": cfg.connections, "wrk_threads": 1, "server_core": cfg.server_core,
            "wrk_core": cfg.wrk_core, "noise_pct_of_core": cfg.noise_pct, "redos": cfg.redos,
            "quick": cfg.quick, "only": cfg.only,
        },
        "targets": targets,
        "servers": servers,
        "cells": cells,
        "databases": run.databases.iter().map(|(t, d)| json!({"table": t.key(), "server": d})).collect::<Vec<_>>(),
        "skipped": run.skipped.iter().map(|(w, why)| json!({"what": w, "why": why})).collect::<Vec<_>>(),
    })
}
