//! State that must be one per server, not one per worker VM: the kv store
//! seen from two workers (each request on a fresh connection, so the
//! kernel spreads them over both workers' listeners).

use std::collections::BTreeSet;
use std::path::Path;

use crate::util::Server;

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
