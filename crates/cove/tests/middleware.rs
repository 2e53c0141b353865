//! app.use / app.use_post: order, filters, patterns, short-circuits, ctx, body, errors.

use serde_json::json;

use crate::util::Server;

fn server() -> Server {
    Server::fixture("middleware", &["--workers", "1"])
}

#[test]
fn run_in_registration_order_sharing_ctx() {
    let s = server();
    let r = s.get("/order");
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!({"trail": "123ph", "method": "GET"}));
}

#[test]
fn method_filter() {
    let s = server();
    let r = s.get("/order");
    assert_eq!((r.header("x-get"), r.header("x-post")), (Some("1"), None));
    // "*" runs for POST, "GET" does not.
    let r = s.post("/order", "");
    assert_eq!(r.json()["trail"], "123ph");
    assert_eq!((r.header("x-get"), r.header("x-post")), (None, Some("1")));
    // "GET" middleware also runs for HEAD.
    let r = s.request("HEAD", "/order", &[], None);
    assert_eq!(r.status, 200);
    assert_eq!((r.header("x-get"), r.header("x-post")), (Some("1"), None));
}

#[test]
fn exact_and_prefix_patterns() {
    let s = server();
    let api = |p: &str| s.get(p).header("x-api").is_some();
    assert!(api("/api"));
    assert!(api("/api/x"));
    assert!(!api("/apix"));
    assert!(!api("/order"));
    let exact = |p: &str| s.get(p).header("x-exact").is_some();
    assert!(exact("/exact"));
    assert!(!exact("/exact/sub"));
}

#[test]
fn runs_for_unknown_paths_too() {
    let r = server().get("/nowhere");
    assert_eq!((r.status, r.text().as_str()), (404, "Not Found"));
    assert_eq!(r.header("x-seen"), Some("yes"));
    assert_eq!(r.header("x-get"), Some("1"));
}

#[test]
fn pre_body_short_circuit_stops_everything_after_it() {
    let s = server();
    for (path, body) in [
        ("/stop/pre", "stopped by pre"),
        ("/stop/pre-true", "stopped by pre (true)"),
    ] {
        let r = s.get(path);
        assert_eq!((r.status, r.text().as_str()), (200, body), "{path}");
        assert_eq!(r.header("x-seen"), Some("yes"), "earlier middleware ran");
        assert_eq!(r.header("x-later"), None, "{path}: later pre-body ran");
        assert_eq!(r.header("x-later-post"), None, "{path}: post-body ran");
    }
    assert_eq!(s.get("/runs").json()["runs"], 0, "a handler ran");
}

#[test]
fn post_body_short_circuit_sees_the_body() {
    let s = server();
    let r = s.post("/stop/post", "data");
    assert_eq!(
        (r.status, r.text().as_str()),
        (200, "stopped by post: data")
    );
    assert_eq!(r.header("x-later"), Some("1"), "pre-body ran before");
    assert_eq!(r.header("x-later-post"), None);
    assert_eq!(s.get("/runs").json()["runs"], 0, "the handler ran");
}

#[test]
fn body_is_nil_before_it_is_read() {
    let r = server().post("/body", "payload");
    assert_eq!(
        r.json(),
        json!({"pre": "nil", "post": "payload", "handler": "payload"})
    );
}

#[test]
fn throwing_middleware_is_500_and_skips_the_handler() {
    let s = server();
    let r = s.get("/throw");
    assert_eq!(r.status, 500);
    assert_eq!(r.text(), "Internal Server Error");
    assert_eq!(r.header("x-after-throw"), None);
    assert_eq!(r.header("x-seen"), Some("yes"), "earlier headers stay");
    assert_eq!(s.get("/runs").json()["runs"], 0);
    s.wait_for_log("middleware boom");
    // The worker carries on.
    assert_eq!(s.get("/order").status, 200);
}
