//! What is particular to JavaScript apps: the sandbox, ES modules,
//! `console`, async handlers, the budget and heap cap, load errors.
//! (Behaviour shared with Lua is in the conformance suite.)

use std::path::PathBuf;

use serde_json::json;

use crate::util::{run, Server};

fn fixture(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
        .join("app.js")
}

fn server(extra: &[&str]) -> Server {
    Server::start(&fixture("js"), extra)
}

#[test]
fn eval_and_function_are_gone() {
    assert_eq!(
        server(&[]).get("/globals").json(),
        json!({"eval": "undefined", "Function": "undefined", "console": "object"})
    );
}

#[test]
fn every_function_constructor_route_is_closed() {
    let v = server(&[]).get("/constructors").json();
    let refused = json!({"ok": false, "error": "EvalError: code generation from strings is disabled in Cove apps"});
    assert_eq!(v, json!([refused, refused, refused, refused]));
}

#[test]
fn relative_and_json_imports_resolve_from_the_importer() {
    assert_eq!(
        server(&[]).get("/modules").json(),
        json!({"shout": "HI!", "data": {"name": "cove", "list": [1, 2, 3]}})
    );
}

/// `cove <fixture>` that must fail to load; returns stderr.
fn load_error(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/js_bad")
        .join(name)
        .join("app.js");
    let r = run(&["-p", "0", "-d", ":memory:", path.to_str().unwrap()]);
    assert_eq!(r.code, Some(1), "{name}: {}", r.stderr);
    r.stderr
}

#[test]
fn imports_cannot_leave_the_app_or_name_packages() {
    let err = load_error("parent");
    assert!(
        err.contains("\"./../secret.js\"") && err.contains("`..` is not allowed"),
        "{err}"
    );
    let err = load_error("absolute");
    assert!(err.contains("absolute paths are not allowed"), "{err}");
    let err = load_error("bare");
    assert!(err.contains("cannot import \"lodash\""), "{err}");
    let err = load_error("unknown");
    assert!(err.contains("unknown hull module: hull:fs"), "{err}");
}

#[test]
fn load_errors_name_file_and_line() {
    let err = load_error("syntax");
    assert!(err.contains("app.js:4: SyntaxError"), "{err}");
    let err = load_error("throws");
    assert!(err.contains("app.js:4: cannot boot"), "{err}");
    let err = load_error("noroutes");
    assert!(
        err.contains("app.js: no routes registered; add one, e.g. app.get(\"/\", (req, res) =>"),
        "{err}"
    );
}

#[test]
fn console_goes_to_the_log_one_line_per_argument() {
    let s = server(&[]);
    assert_eq!(s.get("/console").text(), "logged");
    let log = s.wait_for_log("console-error-line");
    assert!(log.contains("INFO  [app] console-log-line"), "{log}");
    assert!(log.contains("INFO  [app] {\"n\":1}"), "{log}");
    assert!(log.contains("WARN  [app] console-warn-line"), "{log}");
    assert!(log.contains("ERROR [app] console-error-line"), "{log}");
    assert!(
        !log.contains("debug-line"),
        "debug is off by default: {log}"
    );
    let s = server(&["-l", "debug"]);
    s.get("/console");
    s.wait_for_log("debug-line");
}

#[test]
fn async_handlers_are_awaited() {
    let s = server(&[]);
    assert_eq!(s.get("/async").json(), json!({"n": 21}));
    let r = s.get("/rejects");
    assert_eq!(r.status, 500);
    let line = crate::util::line_of(&fixture("js"), "async boom");
    s.wait_for_log(&format!("app.js:{line}: async boom"));
    let r = s.get("/never");
    assert_eq!(r.status, 500);
    s.wait_for_log("promise that never settled");
    assert_eq!(s.get("/async").status, 200, "still serving");
}

#[test]
fn the_instruction_budget_stops_a_loop_and_the_worker_goes_on() {
    let s = server(&["--workers", "1"]);
    let r = s.get("/spin");
    assert_eq!(r.status, 500);
    s.wait_for_log("instruction limit exceeded (100000000 instructions per call");
    assert_eq!(s.get("/async").json(), json!({"n": 21}));
}

#[test]
fn the_heap_cap_stops_a_runaway_handler() {
    let s = server(&["--workers", "1", "-m", "32m"]);
    let r = s.get("/heap");
    assert_eq!(r.status, 500);
    let line = crate::util::line_of(&fixture("js"), "chunks.push");
    s.wait_for_log(&format!(
        "app.js:{line}: not enough memory: the script heap limit was reached (raise it with -m)"
    ));
    assert_eq!(s.get("/async").json(), json!({"n": 21}), "still serving");
}

#[test]
fn a_req_kept_past_its_request_refuses_lazy_fields() {
    let s = server(&["--workers", "1"]);
    assert_eq!(s.get("/keep").text(), "/keep");
    let v = s.get("/stale").json();
    assert_eq!(v["ok"], false);
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("req.headers read after its request ended"),
        "{v}"
    );
}

#[test]
fn body_and_header_lookup() {
    let s = server(&[]);
    let r = s.request(
        "POST",
        "/body",
        &[("X-Custom", "yes")],
        Some("héllo".as_bytes()),
    );
    assert_eq!(r.json(), json!({"body": "héllo", "header": "yes"}));
    let r = s.request("POST", "/body", &[], None);
    assert_eq!(r.json(), json!({"body": null, "header": null}));
}

#[test]
fn blobs_and_number_binding() {
    let s = server(&[]);
    assert_eq!(
        s.get("/blob").json(),
        json!({"type": "blob", "bytes": [1, 2, 255], "isBuffer": true})
    );
    // Integral numbers bind as INTEGER (Hull binds those outside int32 as REAL).
    assert_eq!(
        s.get("/numbers").json(),
        json!({"a": "integer", "b": "integer", "c": "real"})
    );
}

#[test]
fn env_reads_the_manifest_allow_list() {
    let s = Server::start_with_env(&fixture("js"), &[], &[("COVE_TEST_GREETING", "hej")]);
    assert_eq!(s.get("/env").json(), json!({"greeting": "hej"}));
    let s = server(&[]);
    assert_eq!(s.get("/env").json(), json!({"greeting": null}));
}

#[test]
fn reserved_tables_and_late_routes_are_refused() {
    let s = server(&[]);
    let v = s.get("/reserved").json();
    assert_eq!(v["ok"], false);
    assert!(v["error"].as_str().unwrap().contains("_hull_"), "{v}");
    assert_eq!(s.get("/late").status, 500);
    s.wait_for_log("app.get: routes and middleware must be registered while the app loads");
}

#[test]
fn sigterm_exits_cleanly() {
    let mut s = server(&[]);
    assert_eq!(s.get("/async").status, 200);
    s.signal(libc::SIGTERM);
    let status = s.wait_exit();
    assert!(status.success(), "{status:?}\n{}", s.log());
}
