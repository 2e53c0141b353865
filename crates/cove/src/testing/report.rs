//! A suite's results as one JSON line: `cove test --json`'s own shape (with
//! durations and the place of each failure), and Hull's `hull agent test`
//! shape (§1.4) exactly. A failure's `file`/`line` are where the assertion
//! failed; a handler's error has its own, under `requests`.

use std::time::Duration;

use anyhow::Result;
use serde_json::{json, Map, Value as Json};

use cove_caps::testkit::{CaseResult, FailedRequest, Failure, FileResult, Suite};
use cove_core::location::{self, Location};

use crate::app::Runtime;

/// Prints `{"error": …}` when `result` is an error; returns the exit code.
pub fn emit(result: Result<i32>) -> i32 {
    result.unwrap_or_else(|e| {
        println!("{}", error_json(&e));
        1
    })
}

/// `{"error": …}`, with the place the message names, if any.
fn error_json(e: &anyhow::Error) -> Json {
    let text = format!("{e:#}");
    let mut out = Map::new();
    // The place follows a prefix: `test: failed to load app.lua: app.lua:2: …`.
    let mut starts = std::iter::once(0).chain(text.match_indices(": ").map(|(i, _)| i + 2));
    let place = starts.find_map(|i| location::parse(&text[i..]).locations.into_iter().next());
    out.insert("error".into(), text.into());
    if let Some(at) = place {
        put_place(&mut out, &at);
    }
    out.into()
}

/// `cove test --json`: one runtime's suite.
pub fn suite_json(runtime: Runtime, suite: &Suite, took: Duration) -> Json {
    let mut out = counted(runtime, suite, file_json);
    out.insert("duration_ms".into(), ms(took).into());
    out.into()
}

/// What both shapes start with: the runtime, its files, and the counts.
fn counted(runtime: Runtime, suite: &Suite, file: fn(&FileResult) -> Json) -> Map<String, Json> {
    let files: Vec<Json> = suite.files.iter().map(file).collect();
    let (passed, failed) = (suite.passed(), suite.failed());
    let mut out = Map::new();
    out.insert("runtime".into(), runtime.name().into());
    out.insert("files".into(), files.into());
    out.insert("total".into(), (passed + failed).into());
    out.insert("passed".into(), passed.into());
    out.insert("failed".into(), failed.into());
    out
}

fn file_json(file: &FileResult) -> Json {
    let mut out = Map::new();
    out.insert("name".into(), file.name.clone().into());
    if let Some(failure) = &file.load_error {
        put_failure(&mut out, failure);
    }
    let tests: Vec<Json> = file.cases.iter().map(case_json).collect();
    out.insert("tests".into(), tests.into());
    out.into()
}

fn case_json(case: &CaseResult) -> Json {
    let mut out = Map::new();
    out.insert("name".into(), case.name.clone().into());
    let status = if case.failure.is_some() {
        "fail"
    } else {
        "pass"
    };
    out.insert("status".into(), status.into());
    out.insert("duration_ms".into(), ms(case.duration).into());
    if let Some(failure) = &case.failure {
        put_failure(&mut out, failure);
    }
    out.into()
}

fn put_failure(out: &mut Map<String, Json>, failure: &Failure) {
    put_error(out, &failure.error);
    if !failure.requests.is_empty() {
        let requests: Vec<Json> = failure.requests.iter().map(request_json).collect();
        out.insert("requests".into(), requests.into());
    }
    if failure.earlier_requests > 0 {
        out.insert("earlier_requests".into(), failure.earlier_requests.into());
    }
}

/// A request whose handler raised: the handler's error and its place.
fn request_json(request: &FailedRequest) -> Json {
    let mut out = Map::new();
    out.insert("method".into(), request.method.clone().into());
    out.insert("path".into(), request.path.clone().into());
    out.insert("status".into(), request.status.into());
    put_error(&mut out, &request.errors.join("\n"));
    out.into()
}

/// `error`, and when it names a place: `file`, `line` (`column`), and the
/// `message` after the place.
fn put_error(out: &mut Map<String, Json>, error: &str) {
    out.insert("error".into(), error.into());
    let parsed = location::parse(error);
    if let Some(at) = parsed.locations.first() {
        put_place(out, at);
        out.insert("message".into(), parsed.message.into());
    }
}

fn put_place(out: &mut Map<String, Json>, at: &Location) {
    out.insert("file".into(), at.file.clone().into());
    out.insert("line".into(), at.line.into());
    if let Some(column) = at.column {
        out.insert("column".into(), column.into());
    }
}

/// Milliseconds, to the microsecond.
fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// Hull's `hull agent test`: file names without directories, no durations
/// or places.
pub fn agent_json(runtime: Runtime, suite: &Suite) -> Json {
    counted(runtime, suite, agent_file).into()
}

fn agent_file(file: &FileResult) -> Json {
    let name = super::base(&file.name);
    let tests: Vec<Json> = file
        .cases
        .iter()
        .map(|case| match &case.failure {
            None => json!({ "name": case.name, "status": "pass" }),
            Some(f) => json!({ "name": case.name, "status": "fail", "error": f.error }),
        })
        .collect();
    match &file.load_error {
        Some(f) => json!({ "name": name, "error": f.error, "tests": tests }),
        None => json!({ "name": name, "tests": tests }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(error: &str, requests: Vec<FailedRequest>) -> Option<Failure> {
        Some(Failure {
            error: error.into(),
            requests,
            earlier_requests: 0,
        })
    }

    fn case(name: &str, micros: u64, failure: Option<Failure>) -> CaseResult {
        CaseResult {
            name: name.into(),
            duration: Duration::from_micros(micros),
            failure,
        }
    }

    /// A passing and a failing case (after a raising request), then a
    /// file that did not load.
    fn suite() -> Suite {
        let raised = FailedRequest {
            method: "GET".into(),
            path: "/x".into(),
            status: 500,
            errors: vec!["app.lua:7: boom".into()],
        };
        let mut suite = Suite::default();
        suite.files = vec![
            FileResult {
                name: "tests/test_app.lua".into(),
                load_error: None,
                cases: vec![
                    case("GET /health", 420, None),
                    case(
                        "GET /x",
                        1300,
                        failure(
                            "tests/test_app.lua:12: test.eq failed\n  expected: 1",
                            vec![raised],
                        ),
                    ),
                ],
            },
            FileResult {
                name: "tests/sub/test_broken.lua".into(),
                load_error: failure("tests/sub/test_broken.lua:3: syntax error", vec![]),
                cases: vec![],
            },
        ];
        suite
    }

    #[test]
    fn the_json_has_each_case_with_its_duration_and_the_place_it_failed() {
        let v = suite_json(Runtime::Lua, &suite(), Duration::from_millis(5));
        let expected = json!({
            "runtime": "lua",
            "files": [
                {"name": "tests/test_app.lua", "tests": [
                    {"name": "GET /health", "status": "pass", "duration_ms": 0.42},
                    {"name": "GET /x", "status": "fail", "duration_ms": 1.3,
                     "error": "tests/test_app.lua:12: test.eq failed\n  expected: 1",
                     "file": "tests/test_app.lua", "line": 12,
                     "message": "test.eq failed\n  expected: 1",
                     "requests": [{"method": "GET", "path": "/x", "status": 500,
                                   "error": "app.lua:7: boom", "file": "app.lua", "line": 7,
                                   "message": "boom"}]},
                ]},
                {"name": "tests/sub/test_broken.lua",
                 "error": "tests/sub/test_broken.lua:3: syntax error",
                 "file": "tests/sub/test_broken.lua", "line": 3, "message": "syntax error",
                 "tests": []},
            ],
            "total": 3, "passed": 1, "failed": 2, "duration_ms": 5.0,
        });
        assert_eq!(v, expected);
    }

    #[test]
    fn the_agent_json_is_hulls_shape_exactly() {
        let v = agent_json(Runtime::Lua, &suite());
        assert_eq!(
            v.to_string(),
            concat!(
                r#"{"runtime":"lua","files":[{"name":"test_app.lua","tests":["#,
                r#"{"name":"GET /health","status":"pass"},"#,
                r#"{"name":"GET /x","status":"fail","error":"tests/test_app.lua:12: test.eq failed\n  expected: 1"}]},"#,
                r#"{"name":"test_broken.lua","error":"tests/sub/test_broken.lua:3: syntax error","tests":[]}],"#,
                r#""total":3,"passed":1,"failed":2}"#
            )
        );
    }

    #[test]
    fn an_error_names_the_place_behind_its_prefix() {
        let e = anyhow::anyhow!("test: failed to load app.lua: app.lua:2: no db");
        assert_eq!(
            error_json(&e),
            json!({"error": "test: failed to load app.lua: app.lua:2: no db",
                   "file": "app.lua", "line": 2})
        );
        let e = anyhow::anyhow!("test: no test files found in x");
        assert_eq!(
            error_json(&e),
            json!({"error": "test: no test files found in x"})
        );
    }

    #[test]
    fn durations_are_milliseconds_to_three_decimals() {
        assert_eq!(ms(Duration::from_nanos(1_234_567)), 1.235);
        assert_eq!(ms(Duration::ZERO), 0.0);
    }
}
