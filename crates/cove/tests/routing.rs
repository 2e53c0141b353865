//! Route matching: 404, 405, HEAD fallback, trailing slash, params, query.

use serde_json::json;

use crate::util::{Conn, Server};

fn basic() -> Server {
    Server::fixture("basic", &[])
}

#[test]
fn unknown_path_is_404_not_found() {
    let r = basic().get("/nope");
    assert_eq!(r.status, 404);
    assert_eq!(r.reason, "Not Found");
    assert_eq!(r.text(), "Not Found");
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
}

#[test]
fn wrong_method_is_405_with_allow() {
    let s = basic();
    let r = s.request("PUT", "/items", &[], Some(b"x"));
    assert_eq!(r.status, 405);
    assert_eq!(r.text(), "Method Not Allowed");
    assert_eq!(r.header("allow"), Some("GET, POST"));
    let r = s.request("DELETE", "/health", &[], None);
    assert_eq!((r.status, r.header("allow")), (405, Some("GET")));
    // Methods are case-sensitive.
    assert_eq!(s.request("get", "/health", &[], None).status, 405);
}

#[test]
fn head_falls_back_to_get() {
    let s = basic();
    let r = s.request("HEAD", "/items", &[], None);
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert_eq!(r.header("content-length"), Some("4"));
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    // A POST-only path still answers HEAD with 405.
    let r = s.request("HEAD", "/body", &[], None);
    assert_eq!((r.status, r.header("allow")), (405, Some("POST")));
}

#[test]
fn one_trailing_slash_is_tolerated() {
    let s = basic();
    assert_eq!(s.get("/tasks").text(), "tasks");
    let r = s.get("/tasks/");
    assert_eq!((r.status, r.text().as_str()), (200, "tasks"));
    assert_eq!(s.get("/tasks//").status, 404);
    assert_eq!(s.get("/Tasks").status, 404, "paths are case-sensitive");
}

#[test]
fn route_params_are_captured_and_percent_decoded() {
    let s = basic();
    assert_eq!(s.get("/params/1/two").json(), json!({"a": "1", "b": "two"}));
    let r = s.get("/params/a%20b/%C3%A9t%2Fx");
    assert_eq!(r.json(), json!({"a": "a b", "b": "ét/x"}));
    // + is not a space in a path.
    assert_eq!(s.get("/params/a+b/c").json()["a"], "a+b");
    assert_eq!(s.get("/params/1").status, 404);
    assert_eq!(s.get("/params/1/2/3").status, 404);
}

#[test]
fn query_is_decoded_and_last_duplicate_wins() {
    let s = basic();
    let r = s.get("/query?a=1&b=x%20y&c=a+b&a=2&flag&e=%C3%A9");
    assert_eq!(
        r.json(),
        json!({"a": "2", "b": "x y", "c": "a b", "flag": "", "e": "é"})
    );
    // No query: an empty table, which encodes as [].
    assert_eq!(s.get("/query").text(), "[]");
    // The query is not part of matching.
    assert_eq!(s.get("/tasks?x=1").text(), "tasks");
}

/// `req.method/path/query/params/headers` are built on first read; a `req`
/// kept past its request keeps the tables read in time and refuses the
/// rest with a clear error. `method` and `path` are not stored when read
/// (request.rs): refused even when read in time, unless the request ran
/// middleware, which has them set at once.
#[test]
fn lazy_request_fields_belong_to_their_request() {
    let s = Server::fixture("basic", &["--workers", "1"]);
    let r = s.get("/stash?keep=yes");
    assert_eq!(
        (r.text(), r.header("x-method")),
        ("yes".into(), Some("GET"))
    );
    assert_eq!(s.get("/stash/query").text(), "yes");
    assert_eq!(s.get("/stash/headers").status, 500);
    s.wait_for_log("req.headers read outside its own request");
    assert_eq!(s.get("/stash/method").status, 500);
    s.wait_for_log("req.method read outside its own request");
    assert_eq!(s.get("/stash/path").status, 500);
    s.wait_for_log("req.path read outside its own request");
    assert_eq!(s.get("/stash/mw").text(), "ok");
    assert_eq!(s.get("/stash/method").text(), "GET");
    assert_eq!(s.get("/stash/path").text(), "/stash/mw");
}

/// What reads a req table's raw fields sees all of Hull's: `pairs(req)` and
/// the JSON encoder set the fields built on first read before they look.
#[test]
fn pairs_and_json_see_every_request_field() {
    let s = Server::fixture("basic", &["--workers", "1"]);
    assert_eq!(
        s.get("/req/pairs?a=1").text(),
        "headers,method,params,path,query"
    );
    let mut conn = Conn::open(s.port);
    let r = conn.request("POST", "/req/json?a=1", &[("x-tag", "t")], Some(b"hi"));
    let body = r.json();
    assert_eq!(body["method"], "POST");
    assert_eq!(body["path"], "/req/json");
    assert_eq!(body["query"], json!({"a": "1"}));
    assert_eq!(body["headers"]["x-tag"], "t");
    assert_eq!(body["body"], "hi");
    assert_eq!(body["params"], json!([]));
    let encoded: serde_json::Value = serde_json::from_str(&s.get("/req/encode").text()).unwrap();
    assert_eq!(encoded["method"], "GET");
    assert_eq!(encoded["path"], "/req/encode");
}
