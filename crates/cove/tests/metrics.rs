//! `--metrics ADDR`: Prometheus text on a listener of its own, counting
//! requests by route pattern, method and status class; and the app's own
//! metrics (`metrics.counter(...)`), in both runtimes.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

use crate::util::{both, run, Lang, Server};

const LUA_APP: &str = r#"
app.get("/tasks/:id", function(req, res) res:json({ id = req.params.id }) end)
app.get("/boom", function(req, res) error("kaboom") end)
app.get("/spin", function(req, res) while true do end end)
app.post("/body", function(req, res) res:json({ len = #req.body }) end)
"#;

const JS_APP: &str = r#"
import { app } from "hull:app";
app.get("/tasks/:id", (req, res) => res.json({ id: req.params.id }));
app.get("/boom", (req, res) => { throw new Error("kaboom"); });
app.get("/spin", (req, res) => { for (;;) {} });
app.post("/body", (req, res) => res.json({ len: req.body.length }));
"#;

/// One sample of the exposition: its name, labels and value.
#[derive(Debug)]
pub(crate) struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

/// The samples of a Prometheus text exposition (comments skipped).
pub(crate) fn parse(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, rest.trim_end_matches('}')),
            None => (series, ""),
        };
        let mut map = BTreeMap::new();
        // Label values here hold no `",` (route patterns, numbers).
        for pair in labels.split("\",").filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').expect("label=value");
            map.insert(k.to_string(), v.trim_matches('"').to_string());
        }
        out.push(Sample {
            name: name.to_string(),
            labels: map,
            value: value.parse().expect("a number"),
        });
    }
    out
}

/// The sum over every worker of `name`'s samples whose labels include `want`.
pub(crate) fn sum(samples: &[Sample], name: &str, want: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            want.iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

/// GET `path` on `port` with a plain HTTP/1.0 request; status and body.
pub(crate) fn fetch(port: u16, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to metrics");
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_string())
}

/// The metrics port from the server's log line.
pub(crate) fn metrics_port(server: &Server) -> u16 {
    let log = server.wait_for_log("metrics on http://");
    let rest = log.split("metrics on http://").nth(1).unwrap();
    let addr = rest.split('/').next().unwrap();
    addr.rsplit(':').next().unwrap().parse().unwrap()
}

fn scrape(server: &Server) -> Vec<Sample> {
    let (status, body) = fetch(metrics_port(server), "/metrics");
    assert_eq!(status, 200, "{body}");
    parse(&body)
}

fn start(dir: &Path, file: &str, source: &str) -> Server {
    let app = dir.join(file);
    std::fs::write(&app, source).unwrap();
    Server::start(
        &app,
        &[
            "--metrics",
            "127.0.0.1:0",
            "--max-body",
            "1k",
            "--max-instructions",
            "1000000",
        ],
    )
}

fn requests_are_counted(file: &str, source: &str) {
    let dir = tempfile::tempdir().unwrap();
    let s = start(dir.path(), file, source);
    assert_eq!(s.get("/tasks/1").status, 200);
    assert_eq!(s.get("/tasks/2").status, 200);
    assert_eq!(s.get("/nope").status, 404);
    assert_eq!(s.get("/boom").status, 500);
    assert_eq!(s.get("/spin").status, 500);
    let r = s.request("POST", "/body", &[], Some(&[b'x'; 2048]));
    assert_eq!(r.status, 413);
    let r = s.request("POST", "/body", &[], Some(&[b'x'; 10]));
    assert_eq!(r.status, 200);
    // A keep-alive connection held open while the metrics are scraped.
    let mut held = s.conn();
    assert_eq!(held.request("GET", "/tasks/3", &[], None).status, 200);

    let m = scrape(&s);
    let requests = |route, method, status| {
        sum(
            &m,
            "cove_requests_total",
            &[("route", route), ("method", method), ("status", status)],
        )
    };
    assert_eq!(requests("/tasks/:id", "GET", "2xx"), 3.0);
    // The held connection, not the scrape's own (the metrics' port).
    assert!(sum(&m, "cove_open_connections", &[]) >= 1.0);
    assert_eq!(requests("/boom", "GET", "5xx"), 1.0);
    assert_eq!(requests("/spin", "GET", "5xx"), 1.0);
    assert_eq!(requests("/body", "POST", "2xx"), 1.0);
    assert_eq!(requests("<none>", "GET", "4xx"), 1.0);
    // Refused from its Content-Length, before routing.
    assert_eq!(requests("<none>", "POST", "4xx"), 1.0);
    // The raw path is never a label.
    assert!(m
        .iter()
        .all(|s| s.labels.get("route").map(String::as_str) != Some("/tasks/1")));
    assert_eq!(
        sum(
            &m,
            "cove_request_duration_seconds_count",
            &[("route", "/tasks/:id")]
        ),
        3.0
    );
    assert!(
        sum(
            &m,
            "cove_request_duration_seconds_sum",
            &[("route", "/tasks/:id")]
        ) > 0.0
    );
    assert_eq!(sum(&m, "cove_requests_in_flight", &[]), 0.0);
    assert_eq!(sum(&m, "cove_handler_errors_total", &[]), 2.0);
    assert_eq!(sum(&m, "cove_budget_hits_total", &[]), 1.0);
    assert_eq!(sum(&m, "cove_heap_cap_hits_total", &[]), 0.0);
    assert_eq!(sum(&m, "cove_body_limit_rejections_total", &[]), 1.0);
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(sum(&m, "cove_build_info", &[("version", version)]), 1.0);
    assert!(sum(&m, "cove_worker_cpu_microseconds_total", &[("worker", "0")]) > 0.0);
    // Sampled on a request's end, the first one included.
    assert!(sum(&m, "cove_vm_heap_bytes", &[]) > 10_000.0);
    // The dashboard is there too (browser::dashboard), and nothing else.
    let (status, page) = fetch(metrics_port(&s), "/");
    assert_eq!(status, 200);
    assert!(page.starts_with("<!doctype html>"));
    let (status, errors) = fetch(metrics_port(&s), "/errors");
    assert_eq!(status, 200);
    let errors: serde_json::Value = serde_json::from_str(&errors).unwrap();
    assert_eq!(errors["errors"][0]["path"], "/spin", "{errors}");
    assert_eq!(errors["errors"][1]["path"], "/boom", "{errors}");
    let boom = source.lines().position(|l| l.contains("/boom")).unwrap() + 1;
    assert_eq!(
        errors["errors"][1]["where"],
        format!("{file}:{boom}"),
        "{errors}"
    );
    assert_eq!(errors["total"], 2, "{errors}");
    assert_eq!(fetch(metrics_port(&s), "/nope").0, 404);
}

#[test]
fn lua_requests_are_counted_by_route_method_and_status_class() {
    requests_are_counted("app.lua", LUA_APP);
}

#[test]
fn js_requests_are_counted_by_route_method_and_status_class() {
    requests_are_counted("app.js", JS_APP);
}

#[test]
fn off_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.lua");
    std::fs::write(&app, LUA_APP).unwrap();
    let s = Server::start(&app, &[]);
    assert_eq!(s.get("/tasks/1").status, 200);
    assert!(!s.log().contains("metrics on"));
}

#[test]
fn the_apps_own_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.lua");
    std::fs::write(&app, LUA_APP).unwrap();
    let db = dir.path().join("data.db");
    let out = run(&[
        "-p",
        "47311",
        "--metrics",
        "127.0.0.1:47311",
        "-d",
        db.to_str().unwrap(),
        app.to_str().unwrap(),
    ]);
    assert_ne!(out.code, Some(0));
    assert!(
        out.stderr.contains("is the app's own address"),
        "{}",
        out.stderr
    );
    // Nothing was created for a server that could not start.
    assert!(!db.exists());
}

/// An app folder whose migration makes an `items` table.
pub(crate) fn with_items_table() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("migrations")).unwrap();
    std::fs::write(
        dir.path().join("migrations/001_items.sql"),
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);",
    )
    .unwrap();
    dir
}

#[test]
fn database_and_kv_are_counted() {
    let dir = with_items_table();
    let app = r#"
local kv = require("hull.kv")
app.post("/items", function(req, res)
  db.exec("INSERT INTO items (name) VALUES (?)", { req.body })
  kv.incr("items", 1)
  res:json({ count = db.query("SELECT COUNT(*) AS c FROM items")[1].c })
end)
"#;
    std::fs::write(dir.path().join("app.lua"), app).unwrap();
    let s = Server::start(dir.path(), &["--metrics", "127.0.0.1:0"]);
    for name in ["a", "b", "c"] {
        let r = s.post("/items", name);
        assert_eq!(r.status, 200, "{}\n{}", r.text(), s.log());
    }
    let m = scrape(&s);
    assert_eq!(sum(&m, "cove_db_migrations_applied_total", &[]), 1.0);
    // Each request: an INSERT and a SELECT (migrations and the stdlib's
    // own statements may add more).
    assert!(sum(&m, "cove_db_queries_total", &[]) >= 6.0);
    assert!(sum(&m, "cove_db_query_duration_seconds_count", &[]) >= 6.0);
    assert_eq!(sum(&m, "cove_db_query_errors_total", &[]), 0.0);
    // Every INSERT was in some group that committed.
    assert!(sum(&m, "cove_db_group_commit_writes_sum", &[]) >= 3.0);
    assert!(sum(&m, "cove_db_group_commit_writes_count", &[]) >= 1.0);
    assert_eq!(sum(&m, "cove_kv_operations_total", &[("op", "incr")]), 3.0);
}

#[test]
fn cove_dev_serves_them_too_across_a_reload() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app.lua");
    std::fs::write(&app, LUA_APP).unwrap();
    let app = app.to_str().unwrap().to_string();
    let s = Server::start_args_in(
        tempfile::tempdir().unwrap(),
        &["dev", "--metrics", "127.0.0.1:0", "-p", "0", &app],
    )
    .unwrap_or_else(|log| panic!("cove dev did not start:\n{log}"));
    assert_eq!(s.get("/tasks/1").status, 200);
    // An edit reloads the app: its workers' counts go on in the same series.
    std::fs::write(&app, format!("{LUA_APP}\n-- edited\n")).unwrap();
    s.wait_for_log("reloaded");
    assert_eq!(s.get("/tasks/2").status, 200);
    let m = scrape(&s);
    assert_eq!(
        sum(&m, "cove_requests_total", &[("route", "/tasks/:id")]),
        2.0
    );
}

/// The app metrics one app of each language records: made at load, used
/// from handlers, labelled and not; `/bad` names a metric wrongly and
/// `/flood` makes a series per request id.
fn app_metrics_source(lang: Lang) -> &'static str {
    match lang {
        Lang::Lua => {
            r#"
local signups = metrics.counter("signups", "Sign-ups by plan")
local depth = metrics.gauge("queue_depth")
local work = metrics.histogram("work_seconds", "Time spent working")
app.get("/signup/:plan", function(req, res)
  signups:inc(1, { plan = req.params.plan })
  metrics.counter("signups"):inc()
  depth:inc(5)
  depth:dec()
  work:observe(0.2, { step = 1 })
  res:json({ ok = true })
end)
app.get("/set", function(req, res)
  depth:set(42)
  metrics.counter("bytes_total"):inc(10)
  res:json({ ok = true })
end)
app.get("/bad", function(req, res)
  metrics.counter("sign-ups"):inc() -- bad name
  res:json({ ok = true })
end)
app.get("/flood", function(req, res)
  for i = 1, 1001 do signups:inc(1, { id = i }) end
  res:json({ ok = true })
end)
app.get("/forged", function(req, res)
  getmetatable(signups).__index.inc({ series = "app_queue_depth" }) -- forged
  res:json({ ok = true })
end)
"#
        }
        Lang::Js => {
            r#"
import { app } from "hull:app";
import { metrics } from "hull:metrics";
const signups = metrics.counter("signups", "Sign-ups by plan");
const depth = metrics.gauge("queue_depth");
const work = metrics.histogram("work_seconds", "Time spent working");
app.get("/signup/:plan", (req, res) => {
  signups.inc(1, { plan: req.params.plan });
  metrics.counter("signups").inc();
  depth.inc(5);
  depth.dec();
  work.observe(0.2, { step: 1 });
  res.json({ ok: true });
});
app.get("/set", (req, res) => {
  depth.set(42);
  metrics.counter("bytes_total").inc(10);
  res.json({ ok: true });
});
app.get("/bad", (req, res) => {
  metrics.counter("sign-ups").inc(); // bad name
  res.json({ ok: true });
});
app.get("/flood", (req, res) => {
  for (let i = 1; i <= 1001; i++) signups.inc(1, { id: i });
  res.json({ ok: true });
});
app.get("/forged", (req, res) => {
  Object.getPrototypeOf(signups).inc.call({ series: "app_queue_depth" }); // forged
  res.json({ ok: true });
});
"#
        }
    }
}

/// The line of `marker` in `source` (1-based).
fn line_in(source: &str, marker: &str) -> usize {
    source
        .lines()
        .position(|l| l.contains(marker))
        .expect("marker")
        + 1
}

fn app_metrics_are_exported(lang: Lang) {
    let dir = tempfile::tempdir().unwrap();
    let source = app_metrics_source(lang);
    let file = format!("app.{}", lang.ext());
    std::fs::write(dir.path().join(&file), source).unwrap();
    // One worker: the gauge's arithmetic is then one series.
    let s = Server::start(
        &dir.path().join(&file),
        &["--metrics", "127.0.0.1:0", "--workers", "1"],
    );
    for plan in ["pro", "pro", "free"] {
        let r = s.get(&format!("/signup/{plan}"));
        assert_eq!(r.status, 200, "{}\n{}", r.text(), s.log());
    }
    let (status, text) = fetch(metrics_port(&s), "/metrics");
    assert_eq!(status, 200);
    let m = parse(&text);
    let signups = |want: &[(&str, &str)]| sum(&m, "app_signups_total", want);
    assert_eq!(signups(&[("plan", "pro")]), 2.0, "{text}");
    assert_eq!(signups(&[("plan", "free")]), 1.0, "{text}");
    // The unlabelled series (worker only) took the other three.
    assert_eq!(signups(&[]), 6.0, "{text}");
    assert!(m.iter().filter(|s| s.name.starts_with("app_")).all(|s| s
        .labels
        .get("worker")
        .map(String::as_str)
        == Some("0")));
    assert!(
        text.contains("# HELP app_signups_total Sign-ups by plan"),
        "{text}"
    );
    assert_eq!(sum(&m, "app_queue_depth", &[]), 12.0, "{text}");
    assert_eq!(
        sum(&m, "app_work_seconds_count", &[("step", "1")]),
        3.0,
        "{text}"
    );
    let total = sum(&m, "app_work_seconds_sum", &[("step", "1")]);
    assert!((total - 0.6).abs() < 1e-9, "{text}");
    // The server's buckets.
    assert_eq!(sum(&m, "app_work_seconds_bucket", &[("le", "0.25")]), 3.0);
    assert_eq!(sum(&m, "app_work_seconds_bucket", &[("le", "0.1")]), 0.0);

    assert_eq!(s.get("/set").status, 200);
    let m = scrape(&s);
    assert_eq!(sum(&m, "app_queue_depth", &[]), 42.0);
    // A name ending in _total is not given another.
    assert_eq!(sum(&m, "app_bytes_total", &[]), 10.0);

    // A bad name: a 500, the message at the script's line.
    failed_at(
        &s,
        "/bad",
        "metrics.counter: name \"sign-ups\" must match",
        &format!("{file}:{}:", line_in(source, "bad name")),
    );

    // A label from input: the series stop at the bound, with an error.
    failed_at(
        &s,
        "/flood",
        "series, the most it may",
        &format!("{file}:{}:", line_in(source, "1001")),
    );
    let m = scrape(&s);
    let made = m
        .iter()
        .filter(|s| s.name.starts_with("app_") && !s.name.contains("_bucket"))
        .count();
    assert!(made <= cove_caps::app_metrics::MAX_SERIES + 10, "{made}");
    // What was made before still counts.
    assert_eq!(sum(&m, "app_signups_total", &[("plan", "pro")]), 2.0);

    // A method called on an object no `metrics.counter` made: refused.
    failed_at(
        &s,
        "/forged",
        "counter.inc: app_queue_depth is not a counter made by metrics.counter",
        &format!("{file}:{}:", line_in(source, "\"app_queue_depth\" })")),
    );
}

/// `path` answers 500 and the log names `message` at the script line `at`.
fn failed_at(s: &Server, path: &str, message: &str, at: &str) {
    assert_eq!(s.get(path).status, 500, "{path}");
    let log = s.wait_for_log(message);
    let line = log.lines().find(|l| l.contains(message)).unwrap();
    assert!(line.contains(at), "{at}: {line}");
}

/// Without --metrics the calls check their arguments and record nothing.
fn app_metrics_without_metrics_are_checked_no_ops(lang: Lang) {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("app.{}", lang.ext());
    std::fs::write(dir.path().join(&file), app_metrics_source(lang)).unwrap();
    let s = Server::start(&dir.path().join(&file), &[]);
    assert_eq!(s.get("/signup/pro").status, 200, "{}", s.log());
    assert_eq!(s.get("/set").status, 200);
    // Nothing is recorded, so nothing is bounded.
    assert_eq!(s.get("/flood").status, 200, "{}", s.log());
    assert_eq!(s.get("/bad").status, 500);
    s.wait_for_log("metrics.counter: name \"sign-ups\" must match");
}

/// `cove test`: the API is there and records nothing; a bad name fails the
/// case as it would fail the request.
fn app_metrics_under_cove_test(lang: Lang) {
    let dir = tempfile::tempdir().unwrap();
    let file = format!("app.{}", lang.ext());
    std::fs::write(dir.path().join(&file), app_metrics_source(lang)).unwrap();
    std::fs::create_dir(dir.path().join("tests")).unwrap();
    let test = match lang {
        Lang::Lua => {
            r#"
test("metrics are no-ops", function()
  test.eq(test.get("/signup/pro").status, 200)
  test.eq(test.get("/set").status, 200)
  local c = metrics.counter("in_tests")
  c:inc(2, { a = "b" })
  test.err(function() c:inc(-1) end, "whole number")
  test.err(function() metrics.gauge("bad name") end, "must match")
  test.eq(test.get("/bad").status, 500)
  -- The object: its series' name, its kind's methods.
  test.eq(c.series, "app_in_tests_total")
  test.eq(tostring(c):sub(1, 8), "Counter:")
  test.err(function() c.inc(1) end, "counter.inc: call it as a method, with a colon (m:inc(...))")
end)
"#
        }
        Lang::Js => {
            r#"
import { metrics } from "hull:metrics";
test("metrics are no-ops", () => {
  test.eq(test.get("/signup/pro").status, 200);
  test.eq(test.get("/set").status, 200);
  const c = metrics.counter("in_tests");
  c.inc(2, { a: "b" });
  test.err(() => c.inc(-1), "whole number");
  test.err(() => metrics.gauge("bad name"), "must match");
  test.eq(test.get("/bad").status, 500);
  // The object: its series' name, its kind's methods.
  test.eq(c.series, "app_in_tests_total");
  test.eq(JSON.stringify(c), '{"series":"app_in_tests_total"}');
  const inc = c.inc;
  test.err(() => inc(1), "counter.inc: call it on the object metrics.counter returned (m.inc(...))");
});
"#
        }
    };
    std::fs::write(
        dir.path()
            .join(format!("tests/test_metrics.{}", lang.ext())),
        test,
    )
    .unwrap();
    let out = run(&["test", dir.path().to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("1/1 tests passed"), "{}", out.stdout);
}

both!(
    app_metrics_are_exported,
    app_metrics_without_metrics_are_checked_no_ops,
    app_metrics_under_cove_test,
);
