//! The metrics dashboard (`/` on the `--metrics` address) in a real
//! browser, while load runs: its charts draw, and the figures it shows are
//! those of `/metrics`. The page keeps the text of its last two polls
//! (`coveDashboard.raw`, `.prevRaw`), so each figure is checked exactly
//! against the exposition it was computed from: totals are sums over
//! workers, rates are the difference over the interval, p50/p99 are
//! histogram_quantile over the bucket differences. Once the load stops, the
//! totals it shows are checked against a scrape of our own. The run saves
//! a screenshot as target/test-artifacts/dashboard.png.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::cdp::Browser;
use super::{artifacts, chromium_or_skip, ONE_BROWSER};
use crate::metrics::{fetch, metrics_port, parse, sum, Sample};
use crate::util::{line_of, Conn, Server};

const APP: &str = r#"
app.get("/tasks/:id", function(req, res) res:json({ id = req.params.id }) end)
app.post("/items", function(req, res)
  db.exec("INSERT INTO items (name) VALUES (?)", { req.body })
  res:json({ ok = true })
end)
app.get("/boom", function(req, res)
  error("kaboom") -- raised here
end)
"#;

type Step = Result<(), String>;

/// Requests on `port` until `stop`: tasks, inserts and every fifth a
/// request whose handler raises. Returns how many were answered.
fn load(port: u16, stop: Arc<AtomicBool>) -> thread::JoinHandle<u64> {
    thread::spawn(move || {
        let mut conn = Conn::open(port);
        let (mut n, mut answered) = (0u64, 0u64);
        while !stop.load(Ordering::Relaxed) {
            n += 1;
            let (method, path, body) = match n % 5 {
                0 => ("GET", "/boom".to_string(), None),
                1 | 3 => ("POST", "/items".to_string(), Some(&b"item"[..])),
                _ => ("GET", format!("/tasks/{n}"), None),
            };
            let want = if path == "/boom" { 500 } else { 200 };
            match conn.try_request(method, &path, &[], body) {
                Ok(r) => {
                    assert_eq!(r.status, want, "{method} {path}: {}", r.text());
                    answered += 1;
                }
                // A connection the server closed: go on with a new one.
                Err(_) => conn = Conn::open(port),
            }
        }
        answered
    })
}

#[test]
fn dashboard_in_chromium() {
    let Some(chromium) = chromium_or_skip("dashboard_in_chromium") else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = crate::metrics::with_items_table();
    let app = dir.path().join("app.lua");
    std::fs::write(&app, APP).unwrap();
    let raised_at = format!("app.lua:{}", line_of(&app, "-- raised here"));
    let server = Server::start(dir.path(), &["--metrics", "127.0.0.1:0", "--workers", "2"]);
    let port = metrics_port(&server);

    let stop = Arc::new(AtomicBool::new(false));
    let loads: Vec<_> = (0..2).map(|_| load(server.port, stop.clone())).collect();
    let mut b = Browser::launch(&chromium, &[], 1280, 1400)
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium.display()));
    let mut d = Dash { b: &mut b, port };
    let live = d.while_loaded(&raised_at);
    stop.store(true, Ordering::Relaxed);
    let sent: u64 = loads.into_iter().map(|t| t.join().expect("load")).sum();
    let result = live.and_then(|()| d.after_the_load(sent));
    if let Err(e) = result {
        let state = d.state();
        panic!("{e}\npage: {state}\nserver log:\n{}", server.log());
    }
    let png = d.b.screenshot().expect("screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let file = artifacts().join("dashboard.png");
    std::fs::write(&file, &png).expect("write the screenshot");
    println!("screenshot: {}", file.display());
}

struct Dash<'a> {
    b: &'a mut Browser,
    port: u16,
}

/// What the page computed and shows, read in one evaluation (so from one
/// poll: the page's script cannot run in between).
const READ: &str = r##"(() => {
  const d = window.coveDashboard;
  const card = (id) => document.querySelector(`[data-chart="${id}"]`);
  const inked = (canvas) => {
    const { width, height } = canvas;
    if (!width || !height) return 0;
    const px = canvas.getContext("2d").getImageData(0, 0, width, height).data;
    let n = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) n++;
    return n;
  };
  const charts = {};
  for (const fig of document.querySelectorAll("[data-chart]")) {
    charts[fig.dataset.chart] = {
      state: fig.dataset.state,
      needs: fig.dataset.needs,
      value: fig.querySelector(".value").dataset.value ?? "",
      text: fig.querySelector(".value").textContent,
      segments: Number(fig.dataset.segments ?? 0),
      inked: inked(fig.querySelector("canvas")),
      note: getComputedStyle(fig.querySelector(".note")).display,
    };
  }
  const rows = {};
  for (const tr of document.querySelectorAll("#routes tbody tr[data-route]")) {
    rows[tr.dataset.route] = Number(tr.dataset.total);
  }
  const errors = Array.from(document.querySelectorAll("#errors tbody tr[data-seq]"), (tr) =>
    Array.from(tr.children, (td) => td.textContent));
  return {
    polls: d.polls, ok: d.ok, error: d.error, dt: d.dt, raw: d.raw ?? "", prevRaw: d.prevRaw,
    totals: d.totals ?? null, prevTotals: d.prevTotals ?? null,
    rate: d.rates ? d.rates.requests ?? null : null,
    latency: d.rates ? d.rates.latency : {},
    total: card("requests").querySelector(".sub").dataset.value ?? "",
    totalText: card("requests").querySelector(".sub").textContent,
    p50: card("latency").querySelector(".value").dataset.p50 ?? "",
    charts, rows, errors,
    errorsTitle: document.getElementById("errors-title").textContent,
  };
})()"##;

const ROUTE: &str = "/tasks/:id";

impl Dash<'_> {
    fn read(&mut self) -> Result<Value, String> {
        self.b.eval(READ)
    }

    fn state(&mut self) -> String {
        match self.read() {
            Ok(mut v) => {
                // The expositions are long and in the page anyway.
                v["raw"] = json!("…");
                v["prevRaw"] = json!("…");
                v.to_string()
            }
            Err(e) => e,
        }
    }

    /// Wait (20 s at most) until `ready` says the page's figures are there.
    fn wait(&mut self, what: &str, ready: impl Fn(&Value) -> bool) -> Result<Value, String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let v = self.read()?;
            if ready(&v) {
                return Ok(v);
            }
            if Instant::now() > deadline {
                return Err(format!("waiting for {what}"));
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    fn while_loaded(&mut self, raised_at: &str) -> Step {
        self.b.goto(&format!("http://127.0.0.1:{}/", self.port))?;
        let v = self.wait("charts drawn under load", |v| {
            let c = &v["charts"];
            v["polls"].as_u64() >= Some(3)
                && c["requests"]["segments"].as_u64() >= Some(1)
                && c["latency"]["segments"].as_u64() >= Some(1)
                && c["db-statements"]["state"] == "ok"
                && v["latency"][ROUTE]["count"].as_f64() > Some(0.0)
                && v["rate"].as_f64() > Some(0.0)
                && v["errors"].as_array().is_some_and(|e| !e.is_empty())
        })?;
        if v["ok"] != json!(true) {
            return Err(format!("the page could not poll: {}", v["error"]));
        }
        let raw = v["raw"].as_str().unwrap_or_default();
        let prev = v["prevRaw"].as_str().ok_or("no previous poll kept")?;
        let (now, before) = (parse(raw), parse(prev));

        // Totals: the sum over workers of the poll the page drew.
        let requests = sum(&now, "cove_requests_total", &[]);
        expect("total requests", &v["totals"]["requests"], requests)?;
        expect("total shown", &v["total"], requests)?;
        if v["totalText"] != json!(format!("{requests} total")) {
            return Err(format!("the total reads {}", v["totalText"]));
        }
        for route in [ROUTE, "/items", "/boom"] {
            let want = sum(&now, "cove_requests_total", &[("route", route)]);
            expect(&format!("{route}'s row"), &v["rows"][route], want)?;
        }

        // The rate: the increase over the interval the page measured.
        let dt = v["dt"].as_f64().ok_or("no interval")?;
        let increase = requests - sum(&before, "cove_requests_total", &[]);
        expect(
            "the previous total",
            &v["prevTotals"]["requests"],
            requests - increase,
        )?;
        expect("req/s", &v["rate"], increase / dt)?;
        expect(
            "req/s shown",
            &v["charts"]["requests"]["value"],
            increase / dt,
        )?;

        // Percentiles: from the bucket increases of the interval.
        let buckets = bucket_increase(&now, &before, ROUTE);
        let count = buckets.last().map_or(0.0, |b| b.1);
        expect(
            "requests in the interval",
            &v["latency"][ROUTE]["count"],
            count,
        )?;
        for (q, key) in [(0.5, "p50"), (0.99, "p99")] {
            let want = quantile(q, &buckets).ok_or("no observations")?;
            expect(&format!("{ROUTE} {key}"), &v["latency"][ROUTE][key], want)?;
        }
        let all = bucket_increase(&now, &before, "");
        let p99 = quantile(0.99, &all).ok_or("no observations")?;
        expect("p99 shown", &v["charts"]["latency"]["value"], p99)?;
        expect(
            "p50 shown",
            &v["p50"],
            quantile(0.5, &all).unwrap_or(f64::NAN),
        )?;

        // Every chart with its metric present drew; one whose metric is
        // not in /metrics says so instead of drawing zeros.
        for (id, c) in v["charts"].as_object().ok_or("no charts")? {
            let needs = c["needs"].as_str().unwrap_or_default();
            let present = now.iter().any(|s: &Sample| s.name == needs);
            if present {
                if c["state"] == "absent" || c["inked"].as_u64() == Some(0) {
                    return Err(format!("{id} ({needs} is in /metrics) drew nothing: {c}"));
                }
            } else if c["state"] != "absent" || c["note"] != "block" || c["text"] != "—" {
                return Err(format!(
                    "{id} ({needs} is not in /metrics) is not marked absent: {c}"
                ));
            }
        }
        for id in ["requests", "latency", "errors", "db-statements", "heap"] {
            if v["charts"][id]["state"] != "ok" {
                return Err(format!("{id} is not drawn: {}", v["charts"][id]));
            }
        }

        // The last errors, newest first, with where they were raised.
        let row = &v["errors"][0];
        let want = json!([row[0], row[1], "GET /boom", raised_at, row[4]]);
        if *row != want || !row[4].as_str().unwrap_or_default().contains("kaboom") {
            return Err(format!(
                "the last error reads {row}, expected {want} with kaboom"
            ));
        }
        Ok(())
    }

    /// The load has stopped: the page's totals settle on what a scrape of
    /// our own says, and the rate on zero.
    fn after_the_load(&mut self, sent: u64) -> Step {
        let (status, text) = fetch(self.port, "/metrics");
        if status != 200 {
            return Err(format!("/metrics answered {status}"));
        }
        let m = parse(&text);
        let requests = sum(&m, "cove_requests_total", &[]);
        if requests != sent as f64 {
            return Err(format!(
                "/metrics counts {requests} requests, the load sent {sent}"
            ));
        }
        let errors = sum(&m, "cove_handler_errors_total", &[]);
        let polled = self.read()?["polls"].as_u64().unwrap_or(0);
        // Two polls on, the last one began after our scrape.
        let v = self.wait("a poll after the load", |v| {
            v["polls"].as_u64() >= Some(polled + 2)
        })?;
        expect(
            "total requests after the load",
            &v["totals"]["requests"],
            requests,
        )?;
        expect("total shown after the load", &v["total"], requests)?;
        let title = v["errorsTitle"].as_str().unwrap_or_default();
        if !title.contains(&format!(" {errors} since start")) {
            return Err(format!("errors title {title:?}, /metrics counts {errors}"));
        }
        self.wait("req/s back to zero", |v| v["rate"] == json!(0))?;
        Ok(())
    }
}

/// `got` (a number, or a number in a string as data-* attributes hold it)
/// is `want`, to rounding.
fn expect(what: &str, got: &Value, want: f64) -> Step {
    let n = match got {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    };
    match n {
        Some(n) if (n - want).abs() <= 1e-9 * want.abs().max(1.0) => Ok(()),
        _ => Err(format!("{what}: the page has {got}, /metrics says {want}")),
    }
}

/// `cove_request_duration_seconds`' cumulative buckets of `route` (every
/// route for ""), summed over workers, increased from `before` to `now`.
fn bucket_increase(now: &[Sample], before: &[Sample], route: &str) -> Vec<(f64, f64)> {
    let les = |samples: &[Sample]| {
        let mut out: Vec<(f64, f64)> = Vec::new();
        for s in samples.iter().filter(|s| {
            s.name == "cove_request_duration_seconds_bucket"
                && (route.is_empty() || s.labels.get("route").map(String::as_str) == Some(route))
        }) {
            let le = match s.labels["le"].as_str() {
                "+Inf" => f64::INFINITY,
                le => le.parse().expect("le"),
            };
            match out.iter_mut().find(|b| b.0 == le) {
                Some(b) => b.1 += s.value,
                None => out.push((le, s.value)),
            }
        }
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    };
    let before = les(before);
    les(now)
        .into_iter()
        .map(|(le, c)| {
            let was = before.iter().find(|b| b.0 == le).map_or(0.0, |b| b.1);
            (le, c - was)
        })
        .collect()
}

/// histogram_quantile's estimate: linear within the bucket that holds the
/// rank, from 0 up; beyond the last finite bound, that bound.
fn quantile(q: f64, buckets: &[(f64, f64)]) -> Option<f64> {
    let count = buckets.last()?.1;
    if count <= 0.0 {
        return None;
    }
    let rank = q * count;
    let (mut lo, mut below) = (0.0, 0.0);
    for &(le, c) in buckets {
        if c >= rank {
            if le.is_infinite() {
                return Some(lo);
            }
            if c == below {
                return Some(le);
            }
            return Some(lo + (le - lo) * (rank - below) / (c - below));
        }
        (lo, below) = (le, c);
    }
    Some(lo)
}
