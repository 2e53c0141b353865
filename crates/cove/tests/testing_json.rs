//! `cove test --json` and `--file`: the real binary on a copy of the
//! handler-error fixture (tests/fixtures/testing_handler_error) with a
//! passing file and a file that does not load added.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use crate::util::{both, line_of, run, Exit, Lang};

/// The fixture's app and tests/test_500, plus tests/test_ok (passes and
/// prints) and tests/nested/test_broken (a syntax error on line 2).
fn app(lang: Lang) -> (tempfile::TempDir, PathBuf) {
    let ext = lang.ext();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/testing_handler_error")
        .join(ext);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().to_path_buf();
    fs::create_dir_all(dir.join("tests/nested")).expect("mkdir");
    for f in [format!("app.{ext}"), format!("tests/test_500.{ext}")] {
        fs::copy(src.join(&f), dir.join(&f)).expect("copy fixture");
    }
    let (ok, broken) = match lang {
        Lang::Lua => (
            "test('health', function()\n  print('printed by a test')\n  test.eq(test.get('/ok').status, 200)\nend)\n",
            "-- a syntax error on line 2\nlocal x = = 1\n",
        ),
        Lang::Js => (
            "test('health', () => {\n  console.log('printed by a test');\n  test.eq(test.get('/ok').status, 200);\n});\n",
            "// a syntax error on line 2\nlet x = = 1;\n",
        ),
    };
    fs::write(dir.join(format!("tests/test_ok.{ext}")), ok).expect("write test");
    fs::write(dir.join(format!("tests/nested/test_broken.{ext}")), broken).expect("write test");
    (tmp, dir)
}

fn cove_test(dir: &Path, extra: &[&str]) -> Exit {
    let mut args = vec!["test"];
    args.extend_from_slice(extra);
    args.push(dir.to_str().expect("utf-8 path"));
    run(&args)
}

/// Every line of stdout, each of which must be JSON.
fn json_lines(out: &Exit) -> Vec<Json> {
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

fn names(list: &Json) -> Vec<&str> {
    let list = list.as_array().expect("an array");
    list.iter()
        .map(|f| f["name"].as_str().expect("name"))
        .collect()
}

fn a_suite_is_one_json_line_with_statuses_places_and_durations(lang: Lang) {
    let ext = lang.ext();
    let (_tmp, dir) = app(lang);
    let out = cove_test(&dir, &["--json"]);
    assert_eq!(out.code, Some(1), "{}\n{}", out.stdout, out.stderr);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    let suite = &lines[0];
    // What a test prints goes to stderr, never into the JSON.
    assert!(out.stderr.contains("printed by a test"), "{}", out.stderr);
    assert_eq!(suite["runtime"], ext);
    let (broken, t500, ok) = (
        format!("tests/nested/test_broken.{ext}"),
        format!("tests/test_500.{ext}"),
        format!("tests/test_ok.{ext}"),
    );
    assert_eq!(names(&suite["files"]), [&broken, &t500, &ok]);
    // 4 failed cases, 2 passing, and the file that did not load.
    assert_eq!(
        (&suite["total"], &suite["passed"], &suite["failed"]),
        (&Json::from(7), &Json::from(2), &Json::from(5))
    );
    assert!(suite["duration_ms"].as_f64().is_some(), "{suite}");

    let not_loaded = &suite["files"][0];
    assert_eq!(not_loaded["file"], broken.as_str(), "{not_loaded}");
    assert_eq!(not_loaded["line"], 2, "{not_loaded}");
    assert_eq!(not_loaded["tests"], Json::Array(vec![]));

    let cases = &suite["files"][1]["tests"];
    let statuses: Vec<&str> = (0..5)
        .map(|i| cases[i]["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["fail", "fail", "pass", "fail", "fail"],
        "{cases}"
    );
    for case in cases.as_array().unwrap() {
        assert!(
            case["duration_ms"].as_f64().is_some_and(|d| d >= 0.0),
            "{case}"
        );
    }
    // The place is the assertion's; the handler's error has its own.
    let missing = &cases[0];
    assert_eq!(missing["name"], "a missing table");
    assert_eq!(missing["file"], t500.as_str());
    let test_file = dir.join(&t500);
    assert_eq!(
        missing["line"],
        line_of(&test_file, "marker: a missing table")
    );
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("test.eq failed"),
        "{missing}"
    );
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .starts_with("test.eq failed"),
        "{missing}"
    );
    let request = &missing["requests"][0];
    assert_eq!(
        (&request["method"], &request["path"]),
        (&"GET".into(), &"/items".into())
    );
    assert_eq!(request["status"], 500);
    assert_eq!(request["file"], format!("app.{ext}"));
    let app_file = dir.join(format!("app.{ext}"));
    assert_eq!(request["line"], line_of(&app_file, "marker: missing table"));
    // A failure with no failed request has no `requests`; a pass no error.
    assert!(cases[4].get("requests").is_none(), "{}", cases[4]);
    assert!(cases[2].get("error").is_none(), "{}", cases[2]);
}

fn file_picks_test_files_by_path_or_name(lang: Lang) {
    let ext = lang.ext();
    let (_tmp, dir) = app(lang);
    let ok = format!("test_ok.{ext}");
    let t500 = format!("tests/test_500.{ext}");
    let out = cove_test(&dir, &["--json", "--file", &ok, "--file", &t500]);
    let lines = json_lines(&out);
    let expected = [t500.clone(), format!("tests/{ok}")];
    assert_eq!(names(&lines[0]["files"]), expected, "{}", out.stdout);

    // Text mode too; only passing cases ran, so it exits 0.
    let out = cove_test(&dir, &["--file", &ok]);
    assert_eq!(out.code, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(out
        .stdout
        .contains(&format!("--- tests/{ok} ---\n  PASS  health\n")));
    assert!(
        out.stdout.contains("\n1/1 tests passed\n"),
        "{}",
        out.stdout
    );

    // A name that matches nothing says which files there are.
    let out = cove_test(&dir, &["--file", "test_nope.lua"]);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr
            .contains("--file test_nope.lua matches no test file"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(&t500), "{}", out.stderr);
    let out = cove_test(&dir, &["--json", "--file", "test_nope.lua"]);
    assert_eq!(out.code, Some(1));
    let error = json_lines(&out)[0]["error"].to_string();
    assert!(error.contains(&format!("tests/test_ok.{ext}")), "{error}");
}

fn a_startup_error_is_json_with_its_place(lang: Lang) {
    let ext = lang.ext();
    let (_tmp, dir) = app(lang);
    let raise = match lang {
        Lang::Lua => "-- fails at load\nerror('no db')\n",
        Lang::Js => "// fails at load\nthrow new Error('no db');\n",
    };
    fs::write(dir.join(format!("app.{ext}")), raise).expect("write app");
    let out = cove_test(&dir, &["--json"]);
    assert_eq!(out.code, Some(1));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    let error = &lines[0];
    assert!(
        error["error"].as_str().unwrap().contains("no db"),
        "{error}"
    );
    assert_eq!(error["file"], format!("app.{ext}"), "{error}");
    assert_eq!(error["line"], 2, "{error}");
}

both!(
    a_suite_is_one_json_line_with_statuses_places_and_durations,
    file_picks_test_files_by_path_or_name,
    a_startup_error_is_json_with_its_place,
);

#[test]
fn no_app_is_a_json_error() {
    let empty = tempfile::tempdir().expect("temp dir");
    let out = cove_test(empty.path(), &["--json"]);
    assert_eq!(out.code, Some(1));
    let lines = json_lines(&out);
    let error = lines[0]["error"].as_str().expect("error");
    assert!(error.contains("no entry point found"), "{error}");
}

/// An app with both runtimes: Lua's line, then JavaScript's, with the
/// counts of the text summaries.
#[test]
fn each_runtime_has_its_line_lua_first() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/testing");
    let out = cove_test(&dir, &["--json"]);
    assert_eq!(out.code, Some(1));
    let lines = json_lines(&out);
    let runtimes: Vec<&Json> = lines.iter().map(|l| &l["runtime"]).collect();
    assert_eq!(runtimes, ["lua", "js"], "{}", out.stdout);
    for suite in &lines {
        let counts = (&suite["total"], &suite["passed"], &suite["failed"]);
        assert_eq!(counts, (&12.into(), &8.into(), &4.into()), "{suite}");
    }
}

/// `cove agent test`: Hull's `hull agent test` — the Lua suite only when
/// the app has both, basenames, `status` and `error`, and no other key.
#[test]
fn agent_test_prints_hulls_shape() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/testing");
    let out = run(&["agent", "test", dir.to_str().expect("utf-8 path")]);
    assert_eq!(out.code, Some(1), "{}", out.stderr);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    let suite = &lines[0];
    let keys: Vec<&String> = suite.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["runtime", "files", "total", "passed", "failed"]);
    assert_eq!(suite["runtime"], "lua");
    assert_eq!((&suite["passed"], &suite["failed"]), (&8.into(), &4.into()));
    for file in suite["files"].as_array().expect("files") {
        assert!(
            !file["name"].as_str().expect("name").contains('/'),
            "{file}"
        );
        for case in file["tests"].as_array().expect("tests") {
            let fields = case.as_object().expect("object");
            match case["status"].as_str() {
                Some("pass") => assert_eq!(fields.len(), 2, "{case}"),
                Some("fail") => assert!(case["error"].is_string() && fields.len() == 3, "{case}"),
                other => panic!("status {other:?}"),
            }
        }
    }
}
