//! The middleware stdlib keeps its state where every worker sees it: with
//! two workers, and each request on a fresh connection (so the kernel
//! spreads them over both workers' listeners), clients still meet one rate
//! limit, one session store and one request-id counter
//! (conformance/middleware_stdlib, the app the conformance specs use).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::util::{Response, Server};

fn app(ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../conformance/middleware_stdlib/app.{ext}"))
}

/// The server plus the VMs (`X-VM` header) that answered so far.
struct TwoWorkers {
    server: Server,
    vms: BTreeSet<String>,
}

impl TwoWorkers {
    fn start(ext: &str) -> TwoWorkers {
        TwoWorkers {
            server: Server::start(&app(ext), &["--workers", "2"]),
            vms: BTreeSet::new(),
        }
    }

    /// One request on a fresh connection.
    fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)]) -> Response {
        let r = self.server.request(method, path, headers, None);
        let vm = r.header("x-vm").expect("every response names its VM");
        self.vms.insert(vm.to_string());
        r
    }

    /// Without this the test would prove nothing about sharing.
    fn assert_both_workers_answered(&self) {
        assert!(
            self.vms.len() > 1,
            "every request went to one worker: {:?}",
            self.vms
        );
    }
}

fn one_rate_limit(w: &mut TwoWorkers) {
    // The app allows 10 requests to /rl/shared per (very long) window.
    let mut remaining = BTreeSet::new();
    for _ in 0..10 {
        let r = w.send("GET", "/rl/shared", &[]);
        assert_eq!(r.status, 200, "{}", w.server.log());
        let left = r.header("x-ratelimit-remaining").expect("remaining");
        remaining.insert(left.parse::<u32>().expect("a number"));
    }
    // Each request took its own slot of the one shared count.
    assert_eq!(remaining, (0..10).collect::<BTreeSet<_>>());
    for _ in 0..4 {
        let r = w.send("GET", "/rl/shared", &[]);
        assert_eq!(
            r.status, 429,
            "limit + 1 is refused whichever worker answers"
        );
        assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
    }
}

fn one_session_store(w: &mut TwoWorkers) {
    let login = w.send("POST", "/auth/login", &[]);
    assert_eq!(login.status, 200);
    let set_cookie = login.header("set-cookie").expect("login sets a cookie");
    let pair = set_cookie
        .split(';')
        .next()
        .expect("name=value")
        .to_string();
    for _ in 0..30 {
        let r = w.send("GET", "/me/ctx", &[("Cookie", &pair)]);
        assert_eq!(r.status, 200, "the session is known to every worker");
        assert_eq!(r.json()["session"]["user_id"], 7);
    }
    let out = w.send("POST", "/auth/logout", &[("Cookie", &pair)]);
    assert_eq!(out.status, 200);
    for _ in 0..6 {
        let r = w.send("GET", "/me/ctx", &[("Cookie", &pair)]);
        assert_eq!(r.status, 401, "logged out on every worker");
    }
}

fn csrf_tokens_verify_on_every_worker(w: &mut TwoWorkers) {
    let cookie = "hull_session=seed-alice; hull.sid=seed-alice";
    let form = w.send("GET", "/csrf/form", &[("Cookie", cookie)]);
    let token = form.json()["token"].as_str().expect("a token").to_string();
    for _ in 0..12 {
        let r = w.send(
            "POST",
            "/csrf/submit",
            &[("Cookie", cookie), ("X-CSRF-Token", &token)],
        );
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["accepted"], true);
    }
}

fn unique_request_ids(w: &mut TwoWorkers) {
    const N: usize = 40;
    let mut ids = BTreeSet::new();
    for _ in 0..N {
        let r = w.send("GET", "/log/a", &[]);
        let id = r.header("x-request-id").expect("an id").to_string();
        assert_eq!(r.json()["request_id"], id.as_str());
        u64::from_str_radix(&id, 16).expect("a hex counter, as in Hull");
        ids.insert(id);
    }
    assert_eq!(ids.len(), N, "an id was handed out twice");
}

fn shared_across_two_workers(ext: &str) {
    let mut w = TwoWorkers::start(ext);
    one_rate_limit(&mut w);
    one_session_store(&mut w);
    csrf_tokens_verify_on_every_worker(&mut w);
    unique_request_ids(&mut w);
    w.assert_both_workers_answered();
}

#[test]
fn lua_stdlib_state_is_shared_by_two_workers() {
    shared_across_two_workers("lua");
}

#[test]
fn js_stdlib_state_is_shared_by_two_workers() {
    shared_across_two_workers("js");
}
