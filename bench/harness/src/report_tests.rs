use std::collections::BTreeMap;

use super::*;
use crate::peers::PeerSpec;
use crate::plan::{cove_servers, peer_servers, Measurement};
use crate::runner::{Memory, Sample};
use crate::workloads::{workload, Group};
use crate::wrk::WrkResult;

fn cfg() -> Config {
    let mut c = crate::parse_args(&["--quick".to_string()])
        .unwrap()
        .unwrap();
    c.cove = "/nonexistent/cove".into();
    c
}

fn sample(round: usize, rps: f64, cpu: f64) -> Sample {
    Sample {
        round,
        wrk: WrkResult {
            requests: (rps * 2.0) as u64,
            duration_s: 2.0,
            req_per_sec: rps,
            latency_avg_ms: Some(0.5),
            percentiles: vec![
                (50.0, 0.4),
                (75.0, 0.5),
                (90.0, 0.6),
                (99.0, 1.0 + round as f64),
            ],
            ..WrkResult::default()
        },
        server_ticks: 200,
        cpu_us_per_req: cpu,
        db_ticks: None,
        db_cpu_us_per_req: None,
        other_cpu_pct: 1.0,
        wall_s: 2.1,
        client_cpu_pct: None,
    }
}

fn cell(table: Table, server: usize, w: &str, samples: Vec<Sample>) -> Cell {
    Cell {
        m: Measurement {
            table,
            server,
            workload: workload(w).unwrap(),
            connections: 50,
        },
        samples,
        discarded: vec![],
    }
}

/// Servers: 0 baseline, 1 cove-lua, 2 cove-lua-nogroup, 3 cove-lua-2w,
/// 4 cove-js, 5 cove-js-nogroup, 6 cove-js-2w, 7 cove-lua-tpl,
/// 8 cove-js-tpl, 9 cove-lua-pg, 10 cove-lua-pg-2w, 11 cove-js-pg,
/// 12 cove-js-pg-2w, 13 cove-lua-tls, 14 cove-lua-h2c, 15 cove-js-tls,
/// 16 cove-js-h2c, 17 cove-lua-ws, 18 cove-js-ws, 19 cove-lua-obs,
/// 20 cove-js-obs, 21 bun, 22 bun-2w.
const BUN: usize = 21;
fn run() -> Run {
    let c = cfg();
    let mut servers = cove_servers(&c);
    let bun = PeerSpec {
        name: "bun".into(),
        label: "Bun".into(),
        folder: "bun".into(),
        groups: vec![Group::Http, Group::Sqlite],
        cmd: vec!["bun".into()],
        env: vec![],
        workers_env: Some("WORKERS".into()),
        version: vec![],
        size: vec![],
        note: Some("from npm".into()),
        pool: vec![],
    };
    servers.extend(peer_servers(&c, &bun, std::path::Path::new("/tmp")));
    let mut noisy = sample(2, 50_000.0, 30.0);
    noisy.other_cpu_pct = 40.0;
    let mut errors = sample(1, 20_000.0, 20.0);
    errors.wrk.non_2xx = 7;
    let cells = vec![
        cell(
            Table::Hello,
            0,
            "json",
            vec![sample(1, 110_000.0, 8.0), sample(2, 120_000.0, 10.0)],
        ),
        cell(
            Table::Hello,
            1,
            "json",
            vec![sample(1, 90_000.0, 12.0), sample(2, 80_000.0, 13.0)],
        ),
        cell(
            Table::Hello,
            19,
            "json",
            vec![sample(1, 88_000.0, 12.6), sample(2, 79_000.0, 13.13)],
        ),
        cell(
            Table::Hello,
            BUN,
            "json",
            vec![sample(1, 45_000.0, 11.0), noisy],
        ),
        cell(
            Table::HullHttp,
            1,
            "insert",
            vec![sample(1, 60_000.0, 16.0)],
        ),
        cell(
            Table::HullHttp,
            BUN,
            "insert",
            vec![sample(1, 30_000.0, 20.0)],
        ),
        cell(Table::Sqlite, BUN, "write-batch", vec![errors]),
        cell(
            Table::Hello,
            4,
            "json",
            vec![sample(1, 95_000.0, 9.6), sample(2, 85_000.0, 12.0)],
        ),
    ];
    let mut memory = BTreeMap::new();
    memory.insert(
        "cove-lua".to_string(),
        Memory {
            idle_kib: 6_000,
            peak_kib: 20_000,
        },
    );
    Run {
        servers,
        cells,
        memory,
        skipped: vec![("deno".into(), "install failed: npm error 404".into())],
        background_pct: Some(2.0),
        databases: vec![],
    }
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(0.0), "0");
    assert_eq!(thousands(999.4), "999");
    assert_eq!(thousands(1234.0), "1,234");
    assert_eq!(thousands(115_567.4), "115,567");
    assert_eq!(thousands(1_000_000.0), "1,000,000");
}

#[test]
fn tables_with_speed_factor_and_ratio() {
    let md = markdown(&cfg(), &Machine::default(), &run());
    assert!(md.contains("## 1. Plaintext and JSON"), "{md}");
    assert!(md.contains("![GET /json](hello-json.svg)"));
    // Fastest first; the speed factor is relative to the slowest (Bun, 47,500).
    let base =
        md.find("| **Cove baseline: raw hyper, no script** | 115,000 (110,000–120,000) | 2.42× |");
    let lua = md.find("| **Cove (Lua)** | 85,000 (80,000–90,000) | 1.79× |");
    let bun = md.find("| Bun | 47,500 (45,000–50,000) | 1.00× |");
    assert!(base.is_some() && lua.is_some() && bun.is_some(), "{md}");
    let js = md.find("| **Cove (JS)** | 90,000 (85,000–95,000) | 1.89× |");
    assert!(js.is_some(), "{md}");
    assert!(base < js && js < lua && lua < bun);
    // Per-round ratios 12/8 and 13/10 → median 1.40.
    assert!(md.contains("| 1.40× (1.30–1.50) |"), "{md}");
    // rows/s for the batch: 10 rows × 20,000 req/s.
    assert!(md.contains("| 200,000 |"), "{md}");
}

#[test]
fn targets_memory_skips_and_notes() {
    let md = markdown(&cfg(), &Machine::default(), &run());
    assert!(
        md.contains("| Cove Lua `json` (hello) CPU/request ≤ 1.15× raw hyper | 1.40× | **miss** |"),
        "{md}"
    );
    // Per-round ratios 9.6/8 and 12/10.
    assert!(
        md.contains("| Cove JS `json` (hello) CPU/request ≤ 1.25× raw hyper | 1.20× | pass |"),
        "{md}"
    );
    assert!(md.contains("| Cove SQLite insert (`GET /`) req/s ≥ 1.5× Bun + bun:sqlite | 2.00× (60,000 vs 30,000) | pass |"));
    // Per-round ratios 12.6/12 and 13.13/13 → median 1.03, within 1.05.
    assert!(
        md.contains("| Cove Lua `/json` (hello) CPU/request with `--metrics` + JSON access log ≤ 1.05× without | 1.030× (12.87 vs 12.50 µs) | pass |"),
        "{md}"
    );
    assert!(md.contains("| Cove JS `/json` (hello) CPU/request with `--metrics` + JSON access log ≤ 1.05× without | – | not measured |"));
    assert!(md.contains("| Cove idle RSS ≤ 10 MB | 5.9 MiB | pass |"));
    assert!(md.contains("| Cove Lua `/hello` p99 ≤ 2 ms at C = 200 | – | not measured |"));
    assert!(md.contains("| deno | install failed: npm error 404 |"));
    assert!(md.contains("hello:bun:json@50: still noisy after the redo, kept: round(s) 2 (40%)"));
    assert!(md.contains("sqlite:bun:write-batch@50: 7 errors"));
    assert!(md.contains("| **Cove (Lua)** | "), "{md}");
}

#[test]
fn json_has_every_round_and_the_targets() {
    let v = crate::report_json::json(&cfg(), &Machine::default(), &run());
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 8);
    assert_eq!(cells[2]["id"], "hello:cove-lua-obs:json@50");
    assert_eq!(cells[7]["id"], "hello:cove-js:json@50");
    assert_eq!(cells[1]["id"], "hello:cove-lua:json@50");
    assert_eq!(cells[1]["rounds"].as_array().unwrap().len(), 2);
    assert_eq!(cells[1]["summary"]["cpu_ratio_vs_baseline"]["median"], 1.4);
    assert_eq!(v["targets"][0]["verdict"], "miss");
    assert_eq!(v["targets"][1]["verdict"], "pass");
    assert_eq!(v["servers"][1]["idle_rss_kib"], 6000);
    assert_eq!(v["skipped"][0]["what"], "deno");
}

#[test]
fn sweep_lists_each_server_once() {
    let mut r = run();
    for c in [1, 10] {
        for server in [1, BUN] {
            let mut x = cell(
                Table::Sweep,
                server,
                "hello",
                vec![sample(1, 1000.0 * c as f64, 10.0)],
            );
            x.m.connections = c;
            r.cells.push(x);
        }
    }
    assert_eq!(sweep_servers(&r), [1, BUN]);
    let md = markdown(&cfg(), &Machine::default(), &r);
    assert_eq!(
        md.matches("| **Cove (Lua)** | 1,000 · 0.40 ms · 2.00 ms | 10,000 ·")
            .count(),
        1,
        "{md}"
    );
}

/// The template table: each runtime's four routes over two rounds, /health
/// at 10 and 11 µs.
fn with_templates() -> Run {
    let mut r = run();
    let rows: [(usize, [[f64; 2]; 4]); 2] = [
        (7, [[10.0, 11.0], [12.0, 13.2], [25.0, 27.5], [28.0, 30.8]]),
        (8, [[9.0, 10.0], [11.0, 11.0], [24.0, 25.0], [27.0, 29.0]]),
    ];
    for (server, cpus) in rows {
        for (w, cpu) in ["tpl-health", "tpl-simple", "tpl-loop", "tpl-full"]
            .into_iter()
            .zip(cpus)
        {
            let samples = vec![
                sample(1, 1e6 / cpu[0], cpu[0]),
                sample(2, 1e6 / cpu[1], cpu[1]),
            ];
            r.cells.push(cell(Table::Templates, server, w, samples));
        }
    }
    r
}

#[test]
fn templates_table_compares_each_route_with_its_own_health() {
    let r = with_templates();
    let md = markdown(&cfg(), &Machine::default(), &r);
    assert!(
        md.contains("## 7. Hull's template table (Cove only, one worker each)"),
        "{md}"
    );
    assert!(md.contains("Cove only: the peers have no template routes"));
    assert!(md.contains("![CPU per request ÷ /health](templates-ratio.svg)"));
    // Overview: /full 28/10 and 30.8/11 → 2.80× in both rounds; JS 3.0 and 2.9.
    assert!(
        md.contains("| **Cove (Lua), template app** | 10.5 | 12.6 (1.20×) | 26.2 (2.50×) | 29.4 (2.80×) | **2.80× (2.80–2.80)** |"),
        "{md}"
    );
    assert!(md.contains("| **2.95× (2.90–3.00)** |"), "{md}");
    // Per-route sections get the extra column; /health is 1.00× of itself.
    assert!(
        md.contains("### `GET /full`\n\n![GET /full](templates-tpl-full.svg)"),
        "{md}"
    );
    assert!(
        md.contains("| CPU vs baseline | CPU vs `/health` |"),
        "{md}"
    );
    assert!(md.contains("| 1.00× (1.00–1.00) |\n"), "{md}");
    // Other tables keep their columns.
    assert_eq!(md.matches("CPU vs `/health`").count(), 4, "{md}");
    // The targets: Lua misses (2.80×), JS misses (2.95×).
    assert!(
        md.contains(
            "| Cove Lua template `/full` CPU/request ≤ 2.00× its `/health` | 2.80× | **miss** |"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "| Cove JS template `/full` CPU/request ≤ 2.00× its `/health` | 2.95× | **miss** |"
        ),
        "{md}"
    );
}

#[test]
fn templates_without_their_table_are_not_measured() {
    let md = markdown(&cfg(), &Machine::default(), &run());
    assert!(!md.contains("template table (Cove only"));
    assert!(
        md.contains(
            "| Cove Lua template `/full` CPU/request ≤ 2.00× its `/health` | – | not measured |"
        ),
        "{md}"
    );
}

#[test]
fn templates_in_json_and_charts() {
    let r = with_templates();
    let v = crate::report_json::json(&cfg(), &Machine::default(), &r);
    let full = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "templates:cove-js-tpl:tpl-full@50")
        .unwrap();
    assert_eq!(full["summary"]["reference"], "tpl-health");
    assert_eq!(full["summary"]["cpu_ratio_vs_reference"]["max"], 3.0);
    assert_eq!(
        v["cells"][0]["summary"]["reference"],
        serde_json::Value::Null
    );
    let dir = std::env::temp_dir().join(format!("cove-bench-tpl-charts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = crate::charts::write_all(&r, &dir).unwrap();
    let ratio = std::fs::read_to_string(dir.join("templates-ratio.svg"));
    let full_chart = dir.join("templates-tpl-full.svg").is_file();
    std::fs::remove_dir_all(&dir).unwrap();
    let ratio = ratio.unwrap();
    // Three routes other than /health per runtime.
    assert!(ratio.contains("Cove (JS), template app /full"), "{ratio}");
    assert_eq!(ratio.matches("<title>Cove").count(), 6, "{ratio}");
    assert!(!ratio.contains("template app /health"), "{ratio}");
    assert!(full_chart && n >= 5);
}

#[test]
fn hull_routes_divide_by_the_raw_server_beside_them() {
    let mut r = run();
    r.cells.push(cell(
        Table::HullHttp,
        0,
        "health",
        vec![sample(1, 100_000.0, 10.0), sample(2, 100_000.0, 12.0)],
    ));
    r.cells.push(cell(
        Table::HullHttp,
        1,
        "health",
        vec![sample(1, 80_000.0, 12.0), sample(2, 80_000.0, 18.0)],
    ));
    let ratio = |server: usize, w: &str| {
        let c = r
            .cells
            .iter()
            .find(|c| c.m.server == server && c.m.workload.name == w);
        summarize_cell(&r, c.unwrap()).ratio.unwrap().median
    };
    // 12/10 and 18/12, not the Hello table's JSON row (12/8 and 18/10).
    assert!((ratio(1, "health") - 1.35).abs() < 1e-9);
    // No raw row for the insert in its table: the Hello table's JSON row.
    assert!((ratio(1, "insert") - 2.0).abs() < 1e-9);
    let md = markdown(&cfg(), &Machine::default(), &r);
    assert!(md.contains("in Hull's HTTP table the same request to it"));
}

/// A sample of a `pg` or `redis` row: the app's and the database's CPU.
fn db_sample(round: usize, rps: f64, cpu: f64, db: f64) -> Sample {
    let mut s = sample(round, rps, cpu);
    s.db_ticks = Some(100);
    s.db_cpu_us_per_req = Some(db);
    s
}

/// Servers of `run()` plus 21 go-pgx and 22 go-pgx-2w; the pg read and
/// the redis workload measured over two rounds.
const GO: usize = 23;
fn with_databases() -> Run {
    let mut r = run();
    let go = PeerSpec {
        name: "go-pgx".into(),
        label: "Go net/http + pgx".into(),
        folder: "go".into(),
        groups: vec![Group::Pg, Group::Redis],
        cmd: vec!["./gopeer".into()],
        env: vec![],
        workers_env: Some("WORKERS".into()),
        version: vec![],
        size: vec![],
        note: None,
        pool: vec![
            (Group::Pg, "pgxpool MaxConns 10".into()),
            (Group::Redis, "go-redis PoolSize 10".into()),
        ],
    };
    r.servers
        .extend(peer_servers(&cfg(), &go, std::path::Path::new("/tmp")));
    r.databases = vec![(Table::Pg, "PostgreSQL 15.14: a private cluster".into())];
    let rows = [
        // (server, [rps, app cpu, db cpu] per round)
        (9, [[30_000.0, 20.0, 30.0], [32_000.0, 22.0, 28.0]]),
        (11, [[24_000.0, 30.0, 31.0], [26_000.0, 28.0, 29.0]]),
        (GO, [[25_000.0, 25.0, 40.0], [27_000.0, 27.0, 38.0]]),
        (GO + 1, [[40_000.0, 26.0, 40.0], [42_000.0, 26.0, 40.0]]),
    ];
    for (server, rounds) in rows {
        let samples: Vec<Sample> = rounds
            .iter()
            .enumerate()
            .map(|(i, [rps, cpu, db])| db_sample(i + 1, *rps, *cpu, *db))
            .collect();
        let mut c = cell(Table::Pg, server, "read", samples.clone());
        c.m.workload = crate::workloads::workload_in(Group::Pg, "read").unwrap();
        r.cells.push(c);
        r.cells
            .push(cell(Table::Redis, server, "get-incr", samples));
    }
    r
}

#[test]
fn database_tables_show_the_database_cpu() {
    let r = with_databases();
    let md = markdown(&cfg(), &Machine::default(), &r);
    assert!(
        md.contains("## 8. PostgreSQL: one-row SELECT and INSERT"),
        "{md}"
    );
    assert!(md.contains("## 9. Redis: GET + INCR"), "{md}");
    assert!(md.contains("Every contender talks to the same PostgreSQL 15.14: a private cluster."));
    assert!(
        md.contains(
            "### `GET /pg/read?id={1..10000}`\n\n![GET /pg/read?id={1..10000}](pg-read.svg)"
        ),
        "{md}"
    );
    assert!(md.contains("| server | connections | req/s median (min–max) | speed factor | p50 | p99 | app CPU-µs/req | DB CPU-µs/req | app + DB |"));
    // Fastest first: the two-worker Go row, then Cove Lua; app + DB is the
    // per-round sum (50 and 50 → 50.0).
    let go2 = md.find(
        "| Go net/http + pgx (2 workers) | pgxpool MaxConns 10 | 41,000 (40,000–42,000) | 1.64× |",
    );
    let lua = md.find(&format!("| **Cove (Lua)** | {} | 31,000 (30,000–32,000) | 1.24× | 0.40 ms | 2.50 ms | 21.0 (20.0–22.0) | 29.0 (28.0–30.0) | 50.0 (50.0–50.0) |", crate::plan::COVE_PG_POOL));
    assert!(go2.is_some() && lua.is_some() && go2 < lua, "{md}");
    // The Redis section says how Cove's INCR differs.
    assert!(md.contains("INCRBY"));
    // The other tables keep their columns.
    assert!(!md.contains(
        "| server | connections | req/s median (min–max) | speed factor | p50 | p99 | CPU-µs/req"
    ));
}

#[test]
fn database_targets_compare_with_the_fastest_single_worker_peer() {
    let r = with_databases();
    let md = markdown(&cfg(), &Machine::default(), &r);
    // Go's one-worker row (26,000 req/s, 26 µs) is the fastest peer; its
    // two-worker row is not a rival.
    assert!(
        md.contains("| Cove Lua `GET /pg/read?id=` (pg) req/s ≥ the fastest peer's (one worker each) | 1.19× (31,000 vs 26,000 go-pgx) | pass |"),
        "{md}"
    );
    assert!(
        md.contains("| Cove Lua `GET /pg/read?id=` (pg) app CPU/request ≤ the fastest peer's | 0.81× (21.0 vs 26.0 µs go-pgx) | pass |"),
        "{md}"
    );
    assert!(
        md.contains("| Cove JS `GET /pg/read?id=` (pg) req/s ≥ the fastest peer's (one worker each) | 0.96× (25,000 vs 26,000 go-pgx) | **miss** |"),
        "{md}"
    );
    assert!(
        md.contains("| Cove JS `GET /pg/read?id=` (pg) app CPU/request ≤ the fastest peer's | 1.12× (29.0 vs 26.0 µs go-pgx) | **miss** |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| Cove Lua `GET /redis` (redis) req/s ≥ the fastest peer's (one worker each) | 1.19× "
        ),
        "{md}"
    );
    assert!(
        md.contains("| Cove Lua `POST /pg/write` (pg) req/s ≥ the fastest peer's (one worker each) | – | not measured |"),
        "{md}"
    );
    let v = crate::report_json::json(&cfg(), &Machine::default(), &r);
    let read = v["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "pg:cove-lua-pg:read@50")
        .unwrap();
    assert_eq!(read["summary"]["db_cpu_us_per_req"]["median"], 29.0);
    assert_eq!(read["summary"]["app_plus_db_cpu_us_per_req"]["max"], 50.0);
    assert_eq!(read["rounds"][0]["db_cpu_us_per_req"], 30.0);
    assert_eq!(v["databases"][0]["table"], "pg");
    let go = v["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "go-pgx")
        .unwrap();
    assert_eq!(go["pool"]["pg"], "pgxpool MaxConns 10");
    assert_eq!(go["pool"]["redis"], "go-redis PoolSize 10");
    // The Redis table shows the Redis connections.
    assert!(
        md.contains("| Go net/http + pgx | go-redis PoolSize 10 |"),
        "{md}"
    );
}

#[test]
fn database_charts() {
    let r = with_databases();
    let dir = std::env::temp_dir().join(format!("cove-bench-db-charts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    crate::charts::write_all(&r, &dir).unwrap();
    let read = std::fs::read_to_string(dir.join("pg-read.svg"));
    let redis = dir.join("redis-get-incr.svg").is_file();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(read.unwrap().contains("Cove (Lua)"));
    assert!(redis);
}

#[test]
fn noisy_runs_redone_several_times() {
    let mut c = cfg();
    c.redos = 3;
    let mut r = run();
    let mut noisy = sample(1, 1000.0, 50.0);
    noisy.other_cpu_pct = 60.0;
    r.cells[1].discarded = vec![noisy.clone(), noisy];
    let md = markdown(&c, &Machine::default(), &r);
    assert!(
        md.contains("core is redone (up to 3 times; the last run is kept)."),
        "{md}"
    );
    assert!(
        md.contains("hello:cove-lua:json@50: other processes used more than 10% of a core in round(s) 1 (60%), 1 (60%); each was redone (up to 3 times)"),
        "{md}"
    );
    let once = markdown(&cfg(), &Machine::default(), &r);
    assert!(once.contains("each was redone once"));
}

/// A `ws` sample: messages/s, CPU-µs per message, the client's CPU.
fn ws_sample(round: usize, rate: f64, cpu: f64, client: f64) -> Sample {
    let mut s = sample(round, rate, cpu);
    s.client_cpu_pct = Some(client);
    s
}

/// Servers of `run()` plus 21 bun-ws: echo and broadcast over two rounds
/// for Cove Lua (17) and Bun.
const BUN_WS: usize = 23;
fn with_ws() -> Run {
    let mut r = run();
    let bun = PeerSpec {
        name: "bun-ws".into(),
        label: "Bun Bun.serve (WebSocket)".into(),
        folder: "bun".into(),
        groups: vec![Group::Ws],
        cmd: vec!["bin/bun".into(), "ws.js".into()],
        env: vec![],
        workers_env: None,
        version: vec![],
        size: vec![],
        note: None,
        pool: vec![],
    };
    r.servers
        .extend(peer_servers(&cfg(), &bun, std::path::Path::new("/tmp")));
    assert_eq!(r.servers[17].key, "cove-lua-ws");
    assert_eq!(r.servers[BUN_WS].key, "bun-ws");
    let echo = crate::workloads::workload_in(Group::Ws, "echo").unwrap();
    let bcast = crate::workloads::workload_in(Group::Ws, "broadcast").unwrap();
    let rows = [
        (17, echo, [[90_000.0, 9.0, 40.0], [110_000.0, 8.0, 45.0]]),
        (
            BUN_WS,
            echo,
            [[100_000.0, 10.0, 42.0], [100_000.0, 10.0, 44.0]],
        ),
        (
            17,
            bcast,
            [[1_800_000.0, 0.5, 95.0], [2_000_000.0, 0.45, 96.0]],
        ),
        (
            BUN_WS,
            bcast,
            [[2_000_000.0, 0.4, 96.0], [2_000_000.0, 0.4, 97.0]],
        ),
    ];
    for (server, w, rounds) in rows {
        r.cells.push(Cell {
            m: Measurement {
                table: Table::Ws,
                server,
                workload: w,
                connections: w.connections.unwrap_or(50),
            },
            samples: rounds
                .iter()
                .enumerate()
                .map(|(i, [rate, cpu, client])| ws_sample(i + 1, *rate, *cpu, *client))
                .collect(),
            discarded: vec![],
        });
    }
    r
}

#[test]
fn ws_table_compares_with_bun() {
    let r = with_ws();
    let md = markdown(&cfg(), &Machine::default(), &r);
    assert!(md.contains("## 12. WebSocket: echo and broadcast"), "{md}");
    assert!(
        md.contains("### `WebSocket /echo` (50 connections)"),
        "{md}"
    );
    assert!(
        md.contains("### `WebSocket /broadcast` (1,000 subscribers)"),
        "{md}"
    );
    assert!(
        md.contains("![WebSocket /broadcast](ws-broadcast.svg)"),
        "{md}"
    );
    assert!(md.contains("cove-bench --ws-client"), "{md}");
    // Echo: per round 0.90 and 1.10 of Bun's msgs/s, CPU 0.90 and 0.80.
    assert!(
        md.contains("| **Cove (Lua)** | 100,000 (90,000–110,000) | 1.00× (0.90–1.10) | 0.40 ms | 2.50 ms | 8.5 (8.0–9.0) | 0.85× (0.80–0.90) | 42% |"),
        "{md}"
    );
    assert!(
        md.contains("| Bun Bun.serve (WebSocket) | 100,000 (100,000–100,000) | 1.00× | 0.40 ms | 2.50 ms | 10.0 (10.0–10.0) | 1.00× | 43% |"),
        "{md}"
    );
    // Broadcast: CPU below 1 µs keeps three decimals; ratios 0.90/1.00.
    assert!(
        md.contains("| **Cove (Lua)** | 1,900,000 (1,800,000–2,000,000) | 0.95× (0.90–1.00) | 0.40 ms | 2.50 ms | 0.475 (0.450–0.500) | 1.19× (1.12–1.25) | 96% |"),
        "{md}"
    );
    // The targets: same-round ratios' medians.
    assert!(
        md.contains("| Cove Lua WebSocket echo round trips/s ≥ Bun's (ws, one worker each) | 1.00× (100,000 vs 100,000) | pass |"),
        "{md}"
    );
    assert!(
        md.contains("| Cove Lua WebSocket broadcast deliveries/s ≥ Bun's (ws, one worker each) | 0.95× (1,900,000 vs 2,000,000) | **miss** |"),
        "{md}"
    );
    // A client at 90% of its core or more is named in the notes.
    assert!(
        md.contains("ws:cove-lua-ws:broadcast@1000: the load client used 96% of its core"),
        "{md}"
    );
    assert!(
        !md.contains("ws:cove-lua-ws:echo@50: the load client"),
        "{md}"
    );
    // No ratio to the HTTP baseline for WebSocket messages.
    let v = crate::report_json::json(&cfg(), &Machine::default(), &r);
    let cells = v["cells"].as_array().unwrap();
    let ws = cells
        .iter()
        .find(|c| c["id"] == "ws:cove-lua-ws:echo@50")
        .unwrap();
    assert!(ws["summary"]["cpu_ratio_vs_baseline"].is_null());
    assert_eq!(ws["rounds"][0]["client_cpu_pct_of_core"], 40.0);
    // Without Bun's rows the ratios are empty and the targets not measured.
    let mut no_bun = with_ws();
    no_bun.cells.retain(|c| c.m.server != BUN_WS);
    let md = markdown(&cfg(), &Machine::default(), &no_bun);
    assert!(
        md.contains("| **Cove (Lua)** | 100,000 (90,000–110,000) | – |"),
        "{md}"
    );
    assert!(md.contains("| Cove Lua WebSocket echo round trips/s ≥ Bun's (ws, one worker each) | – | not measured |"));
}

#[test]
fn ws_charts_count_messages() {
    let r = with_ws();
    let dir = std::env::temp_dir().join(format!("cove-bench-ws-charts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    crate::charts::write_all(&r, &dir).unwrap();
    let echo = std::fs::read_to_string(dir.join("ws-echo.svg"));
    let bcast = dir.join("ws-broadcast.svg").is_file();
    std::fs::remove_dir_all(&dir).unwrap();
    let echo = echo.unwrap();
    assert!(echo.contains("messages/s"), "{echo}");
    assert!(bcast);
}
