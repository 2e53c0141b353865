//! db.* from app code, migrations, error reporting, and concurrent writes.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread;

use serde_json::json;

use crate::util::{both, example_file, fixture, line_of, Conn, Lang, Server};

both!(a_write_from_another_process_is_seen_by_the_next_request);

fn server() -> Server {
    Server::fixture("db", &[])
}

#[test]
fn query_exec_and_last_id() {
    let s = server();
    let r = s.post("/items", "a");
    assert_eq!((r.status, r.json()), (201, json!({"id": 1})));
    assert_eq!(s.post("/items", "b").json(), json!({"id": 2}));
    assert_eq!(s.post("/items", "a").json(), json!({"id": 3}));
    assert_eq!(s.post("/items/bump", "a").json(), json!({"changed": 2}));
    assert_eq!(s.post("/items/bump", "zzz").json(), json!({"changed": 0}));
    assert_eq!(
        s.get("/items").json(),
        json!([
            {"id": 1, "name": "a", "n": 1},
            {"id": 2, "name": "b", "n": 0},
            {"id": 3, "name": "a", "n": 1},
        ])
    );
    assert_eq!(s.get("/items/count").json(), json!({"count": 3}));
}

#[test]
fn migrations_ran_and_are_recorded() {
    let s = server();
    assert_eq!(s.get("/items/count").status, 200);
    let db = rusqlite::Connection::open(s.db_path()).unwrap();
    let mut stmt = db
        .prepare("SELECT name FROM _hull_migrations ORDER BY name")
        .unwrap();
    let names: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(names, ["001_init.sql", "002_kinds.sql"]);
}

#[test]
fn batch_commits_together() {
    let s = server();
    assert_eq!(s.post("/batch/ok", "").json(), json!({"count": 3}));
}

#[test]
fn batch_error_rolls_back_and_re_raises() {
    let s = server();
    let v = s.post("/batch/fail", "").json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["count"], 0, "rolled back: {v}");
    assert!(v["err"].as_str().unwrap().contains("batch boom"), "{v}");

    let r = s.post("/batch/throw", "");
    assert_eq!(r.status, 500);
    s.wait_for_log("batch throw");
    assert_eq!(
        s.get("/batch/count/batch-throw").json(),
        json!({"count": 0})
    );
    // The connection is usable and not stuck in a transaction.
    assert_eq!(s.post("/batch/ok", "").json(), json!({"count": 3}));
}

#[test]
fn blobs_nulls_and_floats() {
    let r = server().get("/types");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({
            "i": 42, "i_type": "integer",
            "r": 0.5, "r_type": "float",
            "t": "text",
            "b_hex": "6100ff7a", "b_len": 4, "tb": "blob",
            "z_is_nil": true, "tz": "null",
        })
    );
}

#[test]
fn reserved_tables_are_off_limits_to_app_code() {
    let s = server();
    let r = s.get("/reserved");
    assert_eq!(
        (r.status, r.text().as_str()),
        (500, "Internal Server Error")
    );
    let log = s.wait_for_log("reserved");
    assert!(log.contains("_hull_"), "{log}");
}

#[test]
fn db_errors_name_the_script_line() {
    let s = server();
    assert_eq!(s.get("/no-table").status, 500);
    let line = line_of(&fixture("db"), "marker: no such table");
    s.wait_for_log(&format!(
        "app.lua:{line}: db.query failed: no such table: nope"
    ));
}

#[test]
fn db_argument_errors_name_the_caller_line() {
    let v = server().get("/bad-args").json();
    let line = line_of(&fixture("db"), "marker: sql not a string");
    assert_eq!(
        v["sql"],
        format!("app.lua:{line}: db.query: the SQL must be a string, got nil")
    );
    let line = line_of(&fixture("db"), "marker: params not a table");
    assert_eq!(
        v["params"],
        format!(
            "app.lua:{line}: db.exec: parameters must be a table (an array of values), got string"
        )
    );
}

#[test]
fn a_result_over_the_heap_cap_fails_at_the_query_and_the_worker_recovers() {
    let s = Server::fixture("db", &["--workers", "1", "-m", "16m"]);
    assert_eq!(s.get("/over-cap").status, 500);
    let line = line_of(&fixture("db"), "marker: over the cap");
    s.wait_for_log(&format!("app.lua:{line}: db.query: not enough memory"));
    assert_eq!(s.get("/bad-args").status, 200);
    assert_eq!(
        s.get("/over-cap").status,
        500,
        "the cap holds a second time"
    );
}

#[test]
fn concurrent_inserts_are_all_stored_once() {
    const THREADS: usize = 20;
    const PER_THREAD: usize = 100;
    let s = Arc::new(server());
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let port = s.port;
            thread::spawn(move || {
                let mut conn = Conn::open(port);
                (0..PER_THREAD)
                    .map(|i| {
                        let name = format!("t{t}-{i}");
                        let r = conn.request("POST", "/items", &[], Some(name.as_bytes()));
                        assert_eq!(r.status, 201, "{}", r.text());
                        (r.json()["id"].as_i64().expect("id"), name)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut acked: HashMap<i64, String> = HashMap::new();
    for h in handles {
        for (id, name) in h.join().expect("client thread") {
            assert!(
                acked.insert(id, name).is_none(),
                "id {id} acknowledged twice"
            );
        }
    }
    assert_eq!(acked.len(), THREADS * PER_THREAD);
    assert_eq!(
        s.get("/items/count").json(),
        json!({"count": THREADS * PER_THREAD})
    );
    let db = rusqlite::Connection::open(s.db_path()).unwrap();
    let mut stmt = db.prepare("SELECT id, name FROM items").unwrap();
    let stored: HashMap<i64, String> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(stored, acked);
}

/// Group commit holds each response until its write is committed, so a
/// write is visible to the next request on any worker (and to another
/// process) as soon as it is acknowledged; `--no-group-commit` behaves alike.
#[test]
fn acknowledged_writes_are_visible_everywhere_at_once() {
    for extra in [
        &["--workers", "2"][..],
        &["--workers", "2", "--no-group-commit"][..],
    ] {
        let s = Server::fixture("db", extra);
        let file = rusqlite::Connection::open(s.db_path()).unwrap();
        for i in 1..=50 {
            assert_eq!(s.post("/items", "seen").status, 201);
            // A fresh connection may land on the other worker.
            assert_eq!(s.get("/items/count").json(), json!({ "count": i }));
            let on_disk: i64 = file
                .query_row("SELECT COUNT(*) FROM items", [], |r| r.get(0))
                .unwrap();
            assert_eq!(on_disk, i, "{extra:?}");
        }
    }
}

/// Reads in one event-loop turn share a read snapshot (cove-db group.rs),
/// but never one older than a write this process acknowledged: with both
/// workers kept busy by pipelined reads (long turns, snapshots in use), each
/// acknowledged insert is counted by the next read on any worker, and no
/// reader ever sees the count go back.
#[test]
fn acknowledged_writes_are_seen_by_busy_readers() {
    use std::sync::atomic::{AtomicBool, Ordering};
    const BURST: usize = 64;
    let s = Server::fixture("db", &["--workers", "2"]);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..6)
        .map(|_| {
            let (port, stop) = (s.port, stop.clone());
            thread::spawn(move || {
                let mut conn = Conn::open(port);
                let burst = "GET /items/count HTTP/1.1\r\nHost: t\r\n\r\n".repeat(BURST);
                let (mut last, mut reads) = (0, 0);
                while !stop.load(Ordering::Relaxed) {
                    conn.send(burst.as_bytes());
                    for _ in 0..BURST {
                        let count = conn.read_response().json()["count"].as_i64().unwrap();
                        assert!(count >= last, "a reader went back from {last} to {count}");
                        (last, reads) = (count, reads + 1);
                    }
                }
                reads
            })
        })
        .collect();
    // Kept-alive checkers: a fresh connection's first request always comes
    // after the turn it was accepted in, a kept one's can come within it.
    let mut checkers: Vec<Conn> = (0..4).map(|_| s.conn()).collect();
    for i in 1..=100 {
        assert_eq!(s.post("/items", "seen").status, 201);
        for c in &mut checkers {
            let seen = c.request("GET", "/items/count", &[], None).json();
            assert_eq!(seen, json!({ "count": i }));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader") > 0);
    }
}

/// A read snapshot ends with its turn: a row another process inserts
/// between two requests is listed by the second (the snapshot would
/// otherwise stay open while no write of this process moves the count).
fn a_write_from_another_process_is_seen_by_the_next_request(lang: Lang) {
    let s = Server::start(&example_file("rest_api", lang.ext()), &["--workers", "1"]);
    let other = rusqlite::Connection::open(s.db_path()).unwrap();
    let mut conn = s.conn();
    for i in 0..20 {
        let tasks = conn.request("GET", "/tasks", &[], None).json();
        assert_eq!(tasks.as_array().map(Vec::len), Some(i), "{lang:?}");
        other
            .execute(
                "INSERT INTO tasks (title, created_at) VALUES ('outside', 0)",
                [],
            )
            .unwrap();
    }
}

/// The same for a read in pre-body middleware that short-circuits: the
/// response goes out without the handler's path, and the snapshot still
/// ends with the turn.
#[test]
fn a_short_circuiting_middleware_read_ends_its_snapshot() {
    let s = Server::fixture("db", &["--workers", "1"]);
    let other = rusqlite::Connection::open(s.db_path()).unwrap();
    for i in 0..20 {
        // A pre-body short-circuit closes the connection: one per request.
        let r = s.get("/guarded/count");
        assert_eq!((r.status, r.json()), (200, json!({ "count": i })));
        other
            .execute("INSERT INTO items (name) VALUES ('outside')", [])
            .unwrap();
    }
}

#[test]
fn results_of_every_size_are_sequences() {
    let s = server();
    for n in [0u64, 1, 255, 256, 257, 1000] {
        let want = json!({"len": n, "sum": n * (n + 1) / 2, "ordered": true, "empty": n == 0});
        assert_eq!(s.get(&format!("/series/{n}")).json(), want, "n = {n}");
    }
}

/// A result of two or more rows is packed until read (crates/cove-lua/src/rows.rs):
/// every way into it sees the plain array of rows Hull returns.
#[test]
fn packed_results_read_like_plain_ones() {
    let v = server().get("/packed/reads").json();
    let want = json!({
        "len": 3,
        "index": "b",
        "field_missing": true,
        "ipairs_sum": 6,
        "pairs_sum": 14,
        "pairs_count": 3,
        "after_collections": r#"[{"id":1,"name":"a"},{"gone":2.5,"id":2,"name":"b"},{"id":3}]"#,
        "next_key": 1,
        "rawlen": 3,
        "rawget": 3,
        "rawset_len": 3,
        "no_metatable": true,
        "own_metatable": ["a", "default"],
        "newindex": [3, true],
        "insert_len": 4,
        "sorted_first": 3,
        "unpacked": 3,
        "modified": r#"[{"id":1,"name":"changed"},{"gone":2.5,"id":2,"name":"b"},{"id":3}]"#,
        "rows_of_rows": concat!(
            r#"{"a":[{"id":1,"name":"a"},{"gone":2.5,"id":2,"name":"b"},{"id":3}],"#,
            r#""b":[[{"id":1,"name":"a"},{"gone":2.5,"id":2,"name":"b"},{"id":3}]]}"#
        ),
        "gone_is_nil": true,
        "float": "float",
        "one_row": true,
    });
    assert_eq!(v, want);
}

/// The JSON written straight from a packed result is the JSON of its plain
/// form: sorted keys, the last non-NULL of equal names, `[]` for a row of
/// NULLs, the same numbers and string escapes.
#[test]
fn packed_results_encode_like_plain_ones() {
    let v = server().get("/packed/json").json();
    let cases = v.as_array().unwrap();
    assert_eq!(cases.len(), 12);
    for (i, case) in cases.iter().enumerate() {
        assert_eq!(case["packed"], case["plain"], "case {}", i + 1);
    }
    let packed = |i: usize| cases[i]["packed"].as_str().unwrap().to_string();
    assert_eq!(packed(1), r#"[{"a":1},{"a":2}]"#);
    assert_eq!(packed(2), r#"[[],{"z":1}]"#);
    assert!(packed(3).starts_with(r#"[{"b":"\u0000"#), "{}", packed(3));
    assert!(
        packed(3).contains(r#""big":9007199254740993"#),
        "{}",
        packed(3)
    );
    assert!(packed(3).contains(r#""k\"ey":"q\"u\\""#), "{}", packed(3));
    assert_eq!(packed(5), r#"[{"a":1,"b":2,"c":3},{"a":4,"b":5,"c":6}]"#);
    assert_eq!(packed(6), r#"[{"x":1}]"#);
    assert_eq!(packed(7), "[]");
    let wide: serde_json::Value = serde_json::from_str(&packed(9)).unwrap();
    let row: serde_json::Map<_, _> = (1..=20).map(|i| (format!("c{i}"), json!(i))).collect();
    assert_eq!(wide, json!([row, row]));
    assert!(
        packed(9).starts_with(r#"[{"c1":1,"c10":10,"#),
        "{}",
        packed(9)
    );
    let quotes: serde_json::Value = serde_json::from_str(&packed(10)).unwrap();
    assert_eq!(quotes[0], json!({"q": "\"".repeat(1000)}));
    assert_eq!(quotes[299], json!({"q": "x"}));
    let with_null: serde_json::Value = serde_json::from_str(&packed(11)).unwrap();
    assert_eq!(with_null[0], json!({"q": "\"".repeat(1000)}));
    assert_eq!(with_null[299], json!({"q": "x", "z": "y"}));
    let long: serde_json::Value = serde_json::from_str(&packed(8)).unwrap();
    assert_eq!(long.as_array().unwrap().len(), 300);
    assert_eq!(
        long[299],
        json!({"half": 150, "i": 300, "long": "x".repeat(300), "s": "é\"300"})
    );
}

/// A packed result given where Rust code reads a table raw is unpacked first.
#[test]
fn packed_results_are_unpacked_for_raw_readers() {
    let v = server().get("/packed/params").json();
    assert_eq!(v["ok"], false);
    let err = v["err"].as_str().unwrap();
    assert!(err.contains("parameter 1 is a table"), "{err}");
}
