//! Throwing, looping, allocating and recursing without end, deep JSON and a
//! template that includes itself: errors, never a crash.

use serde_json::Value;

use super::one_worker;
use crate::util::{both, Lang, Server};

both!(
    each_hostile_handler_gets_a_500_and_the_worker_serves_on,
    deep_json_is_an_error_not_a_crash,
    a_template_that_includes_itself_is_an_error,
);

/// Requests that must each end in a 500, with what the log says about it
/// (`(lua, js)`; the message of the 500 stays in the log).
const HOSTILE: &[(&str, &str, (&str, &str))] = &[
    ("GET", "/throw", ("hostile throw", "hostile throw")),
    (
        "GET",
        "/loop",
        ("instruction limit exceeded", "instruction limit exceeded"),
    ),
    // QuickJS's words depend on which allocation failed (`uncaught
    // exception: null` when even the error could not be made).
    ("GET", "/hog/tables", ("not enough memory", "")),
    ("GET", "/hog/string", ("not enough memory", "")),
    (
        "GET",
        "/recurse",
        ("not enough memory", "Maximum call stack size exceeded"),
    ),
    (
        "GET",
        "/recurse/builtin",
        ("stack overflow", "Maximum call stack size exceeded"),
    ),
    ("GET", "/recurse/host", ("db.batch", "db.batch")),
    (
        "GET",
        "/json/respond-deep",
        ("nested too deeply", "Maximum call stack size exceeded"),
    ),
    ("GET", "/json/cycle", ("nested too deeply", "circular")),
    (
        "GET",
        "/template/mutual",
        ("circular include", "circular include"),
    ),
];

/// `[[[…]]]`, `depth` deep.
fn nested(depth: usize) -> Vec<u8> {
    let mut text = vec![b'['; depth];
    text.resize(2 * depth, b']');
    text
}

fn still_serving(s: &Server, after: &str) {
    let r = s.get("/health");
    assert_eq!(r.status, 200, "after {after}:\n{}", s.log());
}

/// A 20M budget (counted once a call has run 10 ms in Lua, as the 100M
/// default is) keeps the loop short in a debug build; a 16 MiB heap keeps
/// the allocation storms short.
fn each_hostile_handler_gets_a_500_and_the_worker_serves_on(lang: Lang) {
    let s = one_worker(lang, &["-m", "16m", "--max-instructions", "20000000"]);
    let mut conn = s.conn();
    for (i, (method, path, (lua, js))) in HOSTILE.iter().enumerate() {
        let r = conn.request(method, path, &[], None);
        assert_eq!(
            (r.status, r.text().as_str()),
            (500, "Internal Server Error"),
            "{path}:\n{}",
            s.log()
        );
        // Logged as a script error of this request: the server caught it.
        let line = format!("{method} {path}: ");
        let log = s.wait_for_log_count(&line, 1);
        let said = log.lines().find(|l| l.contains(&line)).unwrap_or_default();
        let want = if lang == Lang::Lua { lua } else { js };
        assert!(
            said.contains(want),
            "{path}: logged {said:?}, want {want:?}"
        );
        // The same worker answers on this connection and on a new one.
        assert_eq!(conn.request("GET", "/health", &[], None).status, 200);
        still_serving(&s, path);
        assert_eq!(log.matches("ERROR").count(), i + 1, "{log}");
    }
    let body = nested(100_000);
    let r = s.request("POST", "/json/decode-body", &[], Some(&body));
    assert_eq!(r.status, 500, "{}", s.log());
    still_serving(&s, "/json/decode-body");
}

fn error_of(s: &Server, path: &str) -> String {
    let r = s.get(path);
    assert_eq!(r.status, 200, "{path}:\n{}", s.log());
    let v: Value = r.json();
    assert_eq!(v["ok"], false, "{path} succeeded: {v}");
    v["err"].as_str().expect("err").to_string()
}

/// 100,000 levels of nesting, parsed or built in script and encoded: an
/// error the script can catch (each level is bounded: serde_json's 128 in
/// Lua, QuickJS's stack check in JS, 128 in both encoders).
fn deep_json_is_an_error_not_a_crash(lang: Lang) {
    let s = one_worker(lang, &[]);
    let (decode, encode) = match lang {
        Lang::Lua => (
            "json.decode: recursion limit exceeded",
            "json.encode: value nested too deeply for JSON",
        ),
        Lang::Js => (
            "RangeError: Maximum call stack size exceeded",
            "RangeError: Maximum call stack size exceeded",
        ),
    };
    let err = error_of(&s, "/json/decode-deep");
    assert!(err.contains(decode), "{err}");
    let err = error_of(&s, "/json/encode-deep");
    assert!(err.contains(encode), "{err}");
    still_serving(&s, "/json/encode-deep");
}

fn a_template_that_includes_itself_is_an_error(lang: Lang) {
    let s = one_worker(lang, &[]);
    let err = error_of(&s, "/template/self");
    assert!(
        err.contains(
            "template.render: templates/self.html:1:4: circular include: self.html → self.html"
        ),
        "{err}"
    );
    // The same file under a new name each time: still found, one level on.
    let err = error_of(&s, "/template/alias");
    assert!(
        err.contains("circular include: alias.html → ./alias.html → ./alias.html"),
        "{err}"
    );
    assert_eq!(s.get("/template/mutual").status, 500);
    s.wait_for_log("circular include: ping.html → pong.html → ping.html");
    still_serving(&s, "/template/mutual");
}
