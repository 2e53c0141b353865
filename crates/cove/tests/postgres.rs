//! The `db` API on PostgreSQL (`--db postgres://…`), against a private
//! PostgreSQL cluster per test, in both runtimes (fixtures/pg/app.*).

use std::path::PathBuf;
use std::thread;
use std::time::Duration;

use serde_json::json;

use crate::util::{both, fixture, run, Conn, Lang, Server};
use cove_testsvc::Postgres;

both!(
    values_map_both_ways,
    question_marks_in_strings_comments_and_identifiers_stay,
    a_batch_is_one_transaction,
    app_code_cannot_read_reserved_tables,
    a_waiting_query_does_not_stall_the_worker,
    a_slow_query_holds_up_no_other_query_and_connections_stay_few,
    a_restarted_server_gives_503_then_serves_again,
    a_worker_waiting_in_place_is_not_left_waiting_for_connections,
    a_query_waited_for_in_place_goes_behind_no_other_request,
);

fn app(lang: Lang) -> PathBuf {
    fixture("pg").with_extension(lang.ext())
}

/// A private cluster and the app on it, with one worker unless `extra` says otherwise.
fn serve(lang: Lang, extra: &[&str]) -> Option<(Postgres, Server)> {
    let pg = Postgres::start()?;
    let server = Server::start_on(&app(lang), &pg.url(), extra);
    Some((pg, server))
}

fn values_map_both_ways(lang: Lang) {
    let Some((_pg, s)) = serve(lang, &[]) else {
        return;
    };
    assert_eq!(
        s.get("/fast").json(),
        json!({"fast": true, "dialect": "postgres"})
    );
    let row = json!({
        "big": 1_099_511_627_776_i64,
        "dbl": 0.1,
        "txt": "it's \"quoted\" — ünïcode ?",
        "flag": true,
        "price": "12.50",
        "at": "2026-11-27 08:55:53.25",
        "doc": "{\"a\": [1, 2]}",
        "raw": "bytes",
    });
    let r = s.post("/values", &row.to_string());
    assert_eq!((r.status, r.json()), (201, json!({"id": 1})), "{}", s.log());
    let r = s.post("/values", &json!({"txt": "second"}).to_string());
    assert_eq!(
        r.json(),
        json!({"id": 2}),
        "last_id follows the identity column"
    );
    assert_eq!(
        s.get("/values/1").json(),
        json!({
            "id": 1,
            "big": 1_099_511_627_776_i64,
            "dbl": 0.1,
            "txt": "it's \"quoted\" — ünïcode ?",
            // SQLite keeps booleans as 1/0; so does Cove on PostgreSQL.
            "flag": 1,
            // NUMERIC stays exact: a string.
            "price": "12.50",
            "at": "2026-11-27 08:55:53.25",
            "doc": "{\"a\": [1, 2]}",
            // BYTEA is a blob: a string in Lua, an ArrayBuffer in JS (as on SQLite).
            "raw": if lang == Lang::Lua { json!("bytes") } else { json!({}) },
        })
    );
    let nulls = s.get("/values/2").json();
    assert_eq!(nulls["big"], json!(null));
    assert_eq!(nulls["flag"], json!(null));
    assert_eq!(s.get("/values/99").status, 404);
}

fn question_marks_in_strings_comments_and_identifiers_stay(lang: Lang) {
    let Some((_pg, s)) = serve(lang, &[]) else {
        return;
    };
    let r = s.get("/placeholders");
    assert_eq!(
        (r.status, r.json()),
        (200, json!({"q": "?", "p": "x", "d": "?", "?": 1})),
        "{}",
        s.log()
    );
}

fn a_batch_is_one_transaction(lang: Lang) {
    let Some((_pg, s)) = serve(lang, &[]) else {
        return;
    };
    assert_eq!(
        s.post("/batch/fail", "").json(),
        json!({"ok": false, "failed": true})
    );
    assert_eq!(
        s.get("/count").json(),
        json!({"n": 0}),
        "the batch rolled back whole"
    );
    assert_eq!(s.post("/batch/ok", "").json(), json!({"ok": true}));
    assert_eq!(s.get("/count").json(), json!({"n": 2}));
}

fn app_code_cannot_read_reserved_tables(lang: Lang) {
    let Some((_pg, s)) = serve(lang, &[]) else {
        return;
    };
    assert_eq!(s.get("/reserved").status, 500);
    s.wait_for_log("_hull_* tables are reserved");
    assert_eq!(s.get("/fast").status, 200, "the server keeps serving");
}

/// One worker: while one request waits 1.5 s on PostgreSQL, another is
/// answered. Ordering only: the slow answer must not have come first.
fn a_waiting_query_does_not_stall_the_worker(lang: Lang) {
    let Some((_pg, s)) = serve(lang, &["--workers", "1"]) else {
        return;
    };
    let mut slow = Conn::open(s.port);
    slow.send(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    thread::sleep(Duration::from_millis(200));
    assert_eq!(s.get("/fast").status, 200);
    assert!(
        !slow.has_data(),
        "the slow request answered before the fast one"
    );
    let r = slow.read_response();
    assert_eq!((r.status, r.json()), (200, json!([{"slept": ""}])));
}

/// One worker: while three requests wait on slow queries, another
/// request's query is answered (no head-of-line blocking behind them), and
/// with ten waiting the worker holds at most 4 connections (plus the one the
/// main thread keeps for migrations).
fn a_slow_query_holds_up_no_other_query_and_connections_stay_few(lang: Lang) {
    let Some((pg, s)) = serve(lang, &["--workers", "1"]) else {
        return;
    };
    let slow_request = |s: &Server| {
        let mut c = Conn::open(s.port);
        c.send(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
        c
    };
    let mut slow: Vec<Conn> = (0..3).map(|_| slow_request(&s)).collect();
    thread::sleep(Duration::from_millis(300));
    // Lua suspends a plain db.query; in JS it is the Async form.
    assert_eq!(s.get("/count").json(), json!({"n": 0}), "{}", s.log());
    assert!(
        slow.iter_mut().all(|c| !c.has_data()),
        "a slow request answered before the query behind it"
    );
    slow.extend((0..7).map(|_| slow_request(&s)));
    thread::sleep(Duration::from_millis(300));
    let n = connections(&pg.url());
    assert!((2..=5).contains(&n), "{n} connections");
    for mut c in slow {
        assert_eq!(c.read_response().status, 200);
    }
}

/// The app's connections to PostgreSQL now, counted from outside it.
fn connections(url: &str) -> i64 {
    let out = std::process::Command::new("psql")
        .args([url, "-Atc"])
        .arg("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'cove'")
        .output()
        .expect("psql");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("psql said {text:?}"))
}

fn a_restarted_server_gives_503_then_serves_again(lang: Lang) {
    let Some((pg, s)) = serve(lang, &[]) else {
        return;
    };
    let body = json!({"txt": "before"}).to_string();
    assert_eq!(s.post("/values", &body).status, 201);
    pg.stop();
    let r = s.get("/count");
    assert_eq!((r.status, r.header("retry-after")), (503, Some("1")));
    s.wait_for_log("cannot connect to PostgreSQL at postgres://cove@127.0.0.1:");
    pg.restart();
    // Each worker connects again on its next query; the acknowledged write is there.
    for _ in 0..4 {
        let r = s.get("/count");
        assert_eq!((r.status, r.json()), (200, json!({"n": 1})), "{}", s.log());
    }
    assert!(
        !s.log().contains(&password(&pg.url())),
        "a password reached the log"
    );
}

fn password(url: &str) -> String {
    let auth = url.split("://").nth(1).and_then(|r| r.split('@').next());
    auth.and_then(|a| a.split(':').nth(1))
        .unwrap_or("?")
        .to_string()
}

#[test]
fn an_unreachable_database_fails_at_start_without_the_password() {
    let port = cove_testsvc::free_port();
    let url = format!("postgres://app:hunter2@127.0.0.1:{port}/app");
    let out = run(&["-p", "0", "-d", &url, fixture("pg").to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let shown = format!("cannot connect to PostgreSQL at postgres://app@127.0.0.1:{port}/app");
    assert!(out.stderr.contains(&shown), "{}", out.stderr);
    assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
}

/// Two processes starting at the same moment apply the migration once (its
/// seed row would clash on a second run).
#[test]
fn processes_starting_together_migrate_once() {
    let Some(pg) = Postgres::start() else { return };
    let url = pg.url();
    let starts: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            thread::spawn(move || Server::try_start_on(&fixture("pg"), &url, &[]))
        })
        .collect();
    let servers: Vec<Server> = starts
        .into_iter()
        .map(|t| t.join().unwrap().unwrap_or_else(|log| panic!("{log}")))
        .collect();
    let applied: usize = servers
        .iter()
        .map(|s| s.log().matches("migration applied: 001_init.sql").count())
        .sum();
    assert_eq!(applied, 1);
    let dir = fixture("pg")
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let q = run(&[
        "db",
        "query",
        "--db",
        &url,
        "SELECT count(*) AS n FROM seeds",
        &dir,
    ]);
    assert_eq!(q.code, Some(0), "{}", q.stderr);
    assert!(q.stdout.contains(r#""rows":[[1]]"#), "{}", q.stdout);
    let st = run(&["migrate", "status", "--db", &url, &dir]);
    assert_eq!(st.code, Some(0), "{}", st.stderr);
    assert!(st.stdout.contains("001_init.sql"), "{}", st.stdout);
    assert!(!st.stdout.contains("pending"), "{}", st.stdout);
}

/// PostgreSQL gone and its port held by a server that never answers: four
/// requests that can wait each start one of the worker's four connections
/// (every attempt gives up after `connect_timeout`), then a request that
/// waits in place (Lua: `db.batch`; JS: the synchronous `db.query`) finds
/// no connection and none to open. It must not wait forever on attempts
/// only its own blocked worker could finish: every request gets its 503.
fn a_worker_waiting_in_place_is_not_left_waiting_for_connections(lang: Lang) {
    let Some(pg) = Postgres::start() else { return };
    let url = format!("{}?connect_timeout=1", pg.url());
    let s = Server::start_on(&app(lang), &url, &["--workers", "1"]);
    let port = pg.port();
    pg.stop();
    let silent = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind the freed port");
    thread::spawn(move || {
        let held: Vec<_> = silent.incoming().take(16).collect();
        thread::sleep(Duration::from_secs(60));
        drop(held);
    });
    let waiting: Vec<Conn> = (0..4)
        .map(|_| {
            let mut c = Conn::open(s.port);
            c.send(b"GET /count HTTP/1.1\r\nHost: x\r\n\r\n");
            c
        })
        .collect();
    thread::sleep(Duration::from_millis(300));
    let (method, path) = match lang {
        Lang::Lua => ("POST", "/batch/ok"),
        Lang::Js => ("GET", "/values/1"),
    };
    let r = Conn::open(s.port).request(method, path, &[], None);
    assert_eq!(r.status, 503, "{}", s.log());
    for mut c in waiting {
        assert_eq!(c.read_response().status, 503);
    }
    s.wait_for_log("no answer within 1 s");
}

/// One worker, its four connections each carrying a request that waits for
/// a large answer; then a query the worker waits for in place (Lua:
/// `db.batch`; JS: the synchronous form). Pipelined behind one of those
/// answers it would never come back: the answer, unread by the blocked
/// worker, stops the connection. It gets a connection of its own instead.
fn a_query_waited_for_in_place_goes_behind_no_other_request(lang: Lang) {
    let Some((_pg, s)) = serve(lang, &["--workers", "1"]) else {
        return;
    };
    assert_eq!(s.post("/values", r#"{"txt": "one"}"#).status, 201);
    let big: Vec<Conn> = (0..4)
        .map(|_| {
            let mut c = Conn::open(s.port);
            c.send(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
            c
        })
        .collect();
    thread::sleep(Duration::from_millis(200));
    let (method, path) = match lang {
        Lang::Lua => ("POST", "/batch/ok"),
        Lang::Js => ("GET", "/values/1"),
    };
    let r = Conn::open(s.port).request(method, path, &[], None);
    assert_eq!(r.status, 200, "{}", s.log());
    for mut c in big {
        let r = c.read_response();
        assert_eq!((r.status, r.json()), (200, json!({"rows": 20})));
    }
}
