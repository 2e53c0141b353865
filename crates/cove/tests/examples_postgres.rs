//! Hull's examples and the stdlib's reserved tables on a real PostgreSQL:
//! `cove test --db postgres://…` passes every example's suites in both
//! runtimes, and a server on PostgreSQL keeps sessions, Idempotency-Key
//! replays, inbox ids and outbox items in the `_hull_*` tables
//! (fixtures/pg_stdlib/app.*). Skipped, with a line on stderr, where
//! PostgreSQL is not installed (unless COVE_REQUIRE_SERVICES is set).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::servers::{closed_port, Receiver};
use crate::util::{bin, both, fixture, run, Conn, Lang, Response, Server, TIMEOUT};
use cove_testsvc::Postgres;

both!(
    stdlib_tables_work_on_postgres,
    a_stdlib_table_created_by_another_process_at_the_same_time,
    a_flush_skips_items_another_process_is_flushing,
);

fn examples_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Every example with a `tests/` directory.
fn examples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(examples_root())
        .expect("examples/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("tests").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What is wrong with one `cove test` run's output, if anything: both
/// suites must have run and passed ("N/N tests passed" after each).
fn suite_problems(stdout: &str) -> Option<String> {
    let lua = stdout.contains("--- tests/test_app.lua ---");
    let js = stdout.contains("--- tests/test_app.js ---");
    if !(lua && js) {
        return Some(format!("not both suites ran (lua: {lua}, js: {js})"));
    }
    let summaries: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" tests passed"))
        .collect();
    if summaries.len() != 2 {
        return Some(format!("expected 2 summaries, got {summaries:?}"));
    }
    for s in &summaries {
        let counts = s
            .strip_suffix(" tests passed")
            .and_then(|c| c.split_once('/'));
        match counts {
            Some((passed, total)) if passed == total && passed != "0" => {}
            _ => return Some(format!("summary {s:?}")),
        }
    }
    if stdout.contains("  FAIL  ") {
        return Some("a test failed".into());
    }
    None
}

/// `cove test --db <its own database> examples/<name>` for every example,
/// side by side on one cluster; all failures are reported together.
#[test]
fn every_example_passes_cove_test_on_postgres() {
    let Some(pg) = Postgres::start() else { return };
    let names = examples();
    assert!(names.len() >= 8, "{names:?}");
    let runs: Vec<_> = names
        .iter()
        .map(|name| {
            let url = pg.create_database(&format!("example_{name}"));
            let dir = examples_root().join(name);
            let name = name.clone();
            thread::spawn(move || {
                let dir = dir.to_str().expect("utf-8 path").to_string();
                let out = run(&["test", "--db", &url, &dir]);
                let problem = match out.code {
                    Some(0) => suite_problems(&out.stdout),
                    code => Some(format!("exit code {code:?}")),
                };
                problem.map(|p| {
                    format!(
                        "== {name}: {p}\n--- stdout\n{}--- stderr\n{}",
                        out.stdout, out.stderr
                    )
                })
            })
        })
        .collect();
    let failures: Vec<String> = runs
        .into_iter()
        .filter_map(|t| t.join().expect("a run panicked"))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} examples failed on PostgreSQL:\n{}",
        failures.len(),
        names.len(),
        failures.join("\n")
    );
}

fn app(lang: Lang) -> PathBuf {
    fixture("pg_stdlib").with_extension(lang.ext())
}

/// `name=value` of the response's Set-Cookie, to send back as Cookie.
fn cookie_pair(r: &Response) -> String {
    let set = r.header("set-cookie").expect("a Set-Cookie header");
    set.split(';').next().unwrap().trim().to_string()
}

fn stdlib_tables_work_on_postgres(lang: Lang) {
    let Some(pg) = Postgres::start() else { return };
    let s = Server::start_on(&app(lang), &pg.url(), &["--workers", "2"]);
    assert_eq!(s.get("/dialect").json(), json!({"dialect": "postgres"}));

    // Sessions: the cookie one request sets is accepted by the next ones
    // (fresh connections, so both workers see it).
    assert_eq!(s.get("/me").status, 401);
    let r = s.post("/login", "ann");
    assert_eq!(r.status, 200, "{}", s.log());
    let pair = cookie_pair(&r);
    assert!(pair.starts_with(&format!("{}=", lang.cookie())), "{pair}");
    for _ in 0..4 {
        let r = s.request("GET", "/me", &[("Cookie", &pair)], None);
        assert_eq!((r.status, r.json()), (200, json!({"user_id": "ann"})));
    }
    let forged = format!("{}={}", lang.cookie(), "0".repeat(64));
    assert_eq!(
        s.request("GET", "/me", &[("Cookie", &forged)], None).status,
        401
    );

    // Idempotency-Key: a retry replays the first response and the handler
    // ran once.
    let post = |key: &str, body: &str| {
        s.request(
            "POST",
            "/orders",
            &[("Idempotency-Key", key)],
            Some(body.as_bytes()),
        )
    };
    let first = post("k-1", "tea");
    assert_eq!(first.status, 201, "{}", s.log());
    let order = first.json()["order"].clone();
    assert!(order.as_i64().is_some(), "{order}");
    for _ in 0..3 {
        let again = post("k-1", "tea");
        assert_eq!((again.status, again.json()), (201, json!({"order": order})));
        assert_eq!(again.header("x-idempotency-replay"), Some("true"));
    }
    assert_eq!(s.get("/orders/count").json(), json!({"n": 1}));
    assert_eq!(post("k-1", "coffee").status, 409, "same key, other body");
    assert_eq!(post("k-2", "coffee").status, 201);
    assert_eq!(s.get("/orders/count").json(), json!({"n": 2}));

    // Inbox: the first delivery of an id is new, the second a duplicate.
    assert_eq!(s.post("/inbox/m-1", "").json(), json!({"duplicate": false}));
    assert_eq!(s.post("/inbox/m-1", "").json(), json!({"duplicate": true}));
    assert_eq!(s.post("/inbox/m-2", "").json(), json!({"duplicate": false}));

    // Outbox: flushes running at once deliver each due item exactly once;
    // a failed delivery is kept for a retry with backoff.
    let receiver = Receiver::start(&[200]);
    let items = 12;
    for i in 0..items {
        let m = json!({"to": receiver.url("/hook"), "payload": format!("p{i}")});
        assert_eq!(s.post("/outbox", &m.to_string()).status, 200, "{}", s.log());
    }
    let dead = format!("http://127.0.0.1:{}/hook", closed_port());
    let m = json!({"to": dead, "payload": "lost"});
    assert_eq!(s.post("/outbox", &m.to_string()).status, 200);
    let port = s.port;
    let flushes: Vec<_> = (0..4)
        .map(|_| {
            thread::spawn(move || Conn::open(port).request("POST", "/outbox/flush", &[], Some(b"")))
        })
        .collect();
    let (mut delivered, mut retried) = (0, 0);
    for f in flushes {
        let r = f.join().unwrap();
        assert_eq!(r.status, 200, "{}", s.log());
        let v = r.json();
        delivered += v["delivered"].as_i64().unwrap();
        retried += v["retried"].as_i64().unwrap();
        assert_eq!(v["failed"], 0, "{v}");
    }
    assert_eq!((delivered, retried), (items, 1));
    let got = receiver.received();
    let payloads: BTreeSet<String> = got.iter().map(|r| r.body.clone()).collect();
    assert_eq!(got.len() as i64, items, "each item is sent once: {got:?}");
    assert_eq!(payloads.len() as i64, items, "{payloads:?}");

    let v = s.get("/outbox").json();
    assert_eq!(
        v["stats"],
        json!({"pending": 1, "delivered": items, "failed": 0})
    );
    let lost = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["payload"] == "lost")
        .expect("the undeliverable item")
        .clone();
    assert_eq!(lost["state"], "pending");
    assert_eq!(lost["attempts"], 1);
    // Retried after 2^1 * 10 s.
    let wait = lost["next_attempt_at"].as_i64().unwrap() - lost["created_at"].as_i64().unwrap();
    assert!((20..=30).contains(&wait), "{lost}");
    assert!(lost["last_error"].as_str().is_some(), "{lost}");
    // Nothing is due now: the next flush sends nothing.
    assert_eq!(
        s.post("/outbox/flush", "").json(),
        json!({"delivered": 0, "failed": 0, "retried": 0})
    );
}

/// `cove … holder.<ext>` with HOLD=`hold`: while loading it keeps a
/// transaction open for three seconds. Started once it is holding; killed
/// when dropped.
struct Holder(Child);

impl Holder {
    fn start(lang: Lang, url: &str, hold: &str) -> Holder {
        let app = fixture("pg_stdlib").with_file_name(format!("holder.{}", lang.ext()));
        let mut child = Command::new(bin())
            .args(["-p", "0", "--workers", "1", "-d", url])
            .arg(&app)
            .env("HOLD", hold)
            .env_remove("HULL_MAX_INSTRUCTIONS")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cove");
        let stderr = child.stderr.take().expect("stderr");
        let holder = Holder(child);
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let mut log = String::new();
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                log.push_str(&line);
                log.push('\n');
                if line.contains("holding _hull_") {
                    let _ = tx.send(Ok(()));
                }
            }
            let _ = tx.send(Err(log));
        });
        match rx.recv_timeout(TIMEOUT) {
            Ok(Ok(())) => holder,
            other => panic!("the holder did not start: {other:?}"),
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Two processes creating a stdlib table at the same moment: PostgreSQL
/// lets both pass CREATE TABLE IF NOT EXISTS and fails the second with a
/// duplicate catalog entry once the first commits. The stdlib tries again,
/// so the second process starts and its sessions work.
fn a_stdlib_table_created_by_another_process_at_the_same_time(lang: Lang) {
    let Some(pg) = Postgres::start() else { return };
    let url = pg.url();
    let holder = Holder::start(lang, &url, "sessions");
    let s = Server::try_start_on(&app(lang), &url, &["--workers", "1"]);
    drop(holder);
    let s = s.unwrap_or_else(|log| panic!("cove did not start:\n{log}"));
    let pair = cookie_pair(&s.post("/login", "bob"));
    let r = s.request("GET", "/me", &[("Cookie", &pair)], None);
    assert_eq!((r.status, r.json()), (200, json!({"user_id": "bob"})));
}

/// A flush skips the items another process's flush has claimed and not
/// yet committed, instead of waiting for them and claiming them again.
fn a_flush_skips_items_another_process_is_flushing(lang: Lang) {
    let Some(pg) = Postgres::start() else { return };
    let url = pg.url();
    let s = Server::start_on(&app(lang), &url, &["--workers", "1"]);
    let _holder = Holder::start(lang, &url, "outbox");
    let r = s.post("/outbox/flush", "");
    assert_eq!(
        (r.status, r.json()),
        (200, json!({"delivered": 0, "failed": 0, "retried": 0})),
        "{}",
        s.log()
    );
    // Once the holder commits, its one attempt at each item shows.
    let start = Instant::now();
    let items = loop {
        let v = s.get("/outbox").json();
        let items = v["items"].as_array().cloned().unwrap_or_default();
        if items.len() == 3 && items.iter().all(|i| i["attempts"] != 0) {
            break items;
        }
        assert!(start.elapsed() < TIMEOUT, "the holder never committed: {v}");
        thread::sleep(Duration::from_millis(50));
    };
    for item in &items {
        assert_eq!(item["attempts"], 1, "{item}");
        assert_eq!(item["state"], "pending", "{item}");
    }
}
