//! State that must be one per server, not one per worker VM: the kv store
//! seen from two workers (each request on a fresh connection, so the
//! kernel spreads them over both workers' listeners).

use std::collections::BTreeSet;
use std::path::Path;

use crate::util::{both, Lang, Server};

fn kv_app(ext: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../conformance/kv/app.{ext}"))
}

fn one_counter_across_workers(ext: &str) {
    let server = Server::start(&kv_app(ext), &["--workers", "2"]);
    const N: i64 = 60;
    let mut counts = BTreeSet::new();
    let mut most_in_one_vm = 0;
    for _ in 0..N {
        // `get` opens a new connection for every request.
        let r = server.get("/kv/incr");
        assert_eq!(r.status, 200, "{}", server.log());
        let j = r.json();
        counts.insert(j["n"].as_i64().unwrap());
        most_in_one_vm = most_in_one_vm.max(j["mine"].as_i64().unwrap());
    }
    // Every count seen once: one counter, however the requests spread.
    assert_eq!(counts, (1..=N).collect::<BTreeSet<_>>());
    // And they did spread: no single VM answered them all.
    assert!(most_in_one_vm < N, "all {N} requests went to one worker");
}

#[test]
fn kv_is_one_store_for_two_lua_workers() {
    one_counter_across_workers("lua");
}

#[test]
fn kv_is_one_store_for_two_js_workers() {
    one_counter_across_workers("js");
}

/// With `--kv redis://…` the store is the deployment's: two processes (not
/// just two workers) count on one counter. When Redis goes away, kv calls
/// fail with a clear error, the rate limiter lets requests through (and
/// says so), and both recover once Redis is back.
fn on_redis(lang: Lang) {
    let Some(redis) = cove_testsvc::Redis::start() else {
        return;
    };
    let url = redis.url();
    let kv_flags = ["--workers", "1", "--kv", url.as_str()];
    let a = Server::start(&kv_app(lang.ext()), &kv_flags);
    let b = Server::start(&kv_app(lang.ext()), &kv_flags);
    let counts: BTreeSet<i64> = (0..10)
        .map(|i| {
            let s = if i % 2 == 0 { &a } else { &b };
            s.get("/kv/incr").json()["n"].as_i64().unwrap()
        })
        .collect();
    assert_eq!(counts, (1..=10).collect::<BTreeSet<_>>());

    let mw = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance/middleware_stdlib")
        .join(format!("app.{}", lang.ext()));
    let limited = Server::start(&mw, &kv_flags);
    assert_eq!(limited.get("/rl/global").status, 200);
    redis.stop();
    let r = a.get("/kv/incr");
    assert_eq!(r.status, 500);
    a.wait_for_log("kv.incr: Redis unavailable at redis://127.0.0.1:");
    for _ in 0..5 {
        assert_eq!(
            limited.get("/rl/global").status,
            200,
            "the limiter fails open"
        );
    }
    limited.wait_for_log("ratelimit: the kv store failed, so requests pass unlimited");
    redis.restart();
    assert_eq!(
        a.get("/kv/incr").json()["n"],
        1,
        "a fresh Redis counts from one"
    );
}

both!(on_redis);
