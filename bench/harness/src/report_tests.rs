use super::*;
use crate::rows::ROWS;
use crate::wrk::WrkResult;

fn cfg() -> Config {
    Config {
        rounds: 3,
        seconds: 2,
        warmup: 1,
        connections: 50,
        only: None,
        cove: "target/release/cove".into(),
        app: "bench/apps/hello/app.lua".into(),
        out_dir: "bench/results".into(),
        server_core: 0,
        wrk_core: 1,
        noise_pct: 10.0,
        quick: true,
    }
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
        other_cpu_pct: 1.0,
        wall_s: 2.1,
    }
}

fn results() -> Run {
    let base = RowResult {
        row: &ROWS[0],
        samples: vec![
            sample(1, 110_000.0, 8.0),
            sample(2, 120_000.0, 10.0),
            sample(3, 100_000.0, 9.0),
        ],
        discarded: vec![],
    };
    let mut noisy = sample(2, 50_000.0, 30.0);
    noisy.other_cpu_pct = 40.0;
    let health = RowResult {
        row: &ROWS[1],
        samples: vec![
            sample(1, 100_000.0, 8.8),
            sample(2, 95_000.0, 12.0),
            sample(3, 98_000.0, 9.9),
        ],
        discarded: vec![noisy],
    };
    let mut bad = sample(1, 20_000.0, 40.0);
    bad.wrk.non_2xx = 7;
    let insert = RowResult {
        row: &ROWS[4],
        samples: vec![bad, sample(2, 21_000.0, 25.0), sample(3, 19_000.0, 27.0)],
        discarded: vec![],
    };
    Run {
        rows: vec![base, health, insert],
        background_pct: Some(3.0),
    }
}

#[test]
fn thousands_separators() {
    assert_eq!(thousands(0.0), "0");
    assert_eq!(thousands(999.4), "999");
    assert_eq!(thousands(1000.0), "1,000");
    assert_eq!(thousands(123_456.7), "123,457");
    assert_eq!(thousands(1_234_567.0), "1,234,567");
}

#[test]
fn ratios_are_per_round() {
    let r = results().rows;
    let s = summarize_row(&r[1], Some(&r[0]));
    let q = s.ratio.unwrap();
    // 8.8/8 = 1.1, 12/10 = 1.2, 9.9/9 = 1.1
    assert!((q.median - 1.1).abs() < 1e-9);
    assert!((q.max - 1.2).abs() < 1e-9);
    assert_eq!(s.verdict, "pass");
    assert_eq!(s.p99_ms, Some(3.0));
    assert_eq!(s.rps.unwrap().median, 98_000.0);
    let i = summarize_row(&r[2], Some(&r[0]));
    assert_eq!(i.verdict, "**miss** (errors!)");
    assert_eq!(i.errors, 7);
    assert_eq!(
        summarize_row(&r[1], None).verdict,
        "n/a (no baseline in this run)"
    );
}

#[test]
fn markdown_table() {
    let md = markdown(&cfg(), &Machine::default(), &results());
    let lines: Vec<&str> = md.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.starts_with("| route |"))
        .unwrap();
    assert!(lines[header + 1].starts_with("|---|"));
    assert!(lines[header + 2].starts_with("| `GET /` baseline: raw hyper, no script | 110,000 (100,000–120,000) | 0.40 ms | 3.00 ms | 9.0 (8.0–10.0) | 1.00× | — | — | — (denominator) |"));
    assert!(lines[header + 3].contains("| 1.10× (1.10–1.20) | ≤ 1.15× | 1.45× | pass |"));
    assert!(lines[header + 4].contains("≤ 2.00× | 5× | **miss** (errors!) |"));
    for l in &lines[header..header + 5] {
        assert_eq!(l.matches('|').count(), 10, "{l}");
    }
    assert!(md.contains(
        "health: other processes used more than 10% of a core in round(s) 2 (40%); each was redone once"
    ));
    assert!(md.contains("other processes used 3% of a core"));
    assert!(md.contains("insert round 1: 7 non-2xx/3xx responses"));
    assert!(md.contains("3 interleaved rounds × 2 s (`--quick`)"));
}

#[test]
fn json_keeps_every_round() {
    let v = json(&cfg(), &Machine::default(), &results());
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1]["rounds"].as_array().unwrap().len(), 3);
    assert_eq!(rows[1]["discarded"][0]["other_cpu_pct_of_core"], 40.0);
    assert_eq!(rows[0]["rounds"][2]["latency_percentiles_ms"]["99"], 4.0);
    assert_eq!(rows[2]["summary"]["errors"], 7);
    assert_eq!(v["config"]["rounds"], 3);
    assert_eq!(v["background_other_cpu_pct_of_core"], 3.0);
}
