//! `cove test`: Hull's in-process runner, run as a user would, on the
//! examples and on a fixture with passing, failing and broken test files in
//! both languages (tests/fixtures/testing).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{bin, both, line_of, run, Lang};

fn cove_test(dir: &Path) -> Output {
    Command::new(bin())
        .arg("test")
        .arg(dir)
        .output()
        .expect("run cove test")
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/testing")
}

fn example_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A copy of the fixture with only the named test files.
fn fixture_with(tests: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("temp dir");
    let src = fixture_dir();
    for f in ["app.lua", "app.js"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).expect("copy app");
    }
    for sub in ["migrations", "tests"] {
        std::fs::create_dir(tmp.path().join(sub)).expect("mkdir");
    }
    std::fs::copy(
        src.join("migrations/001_init.sql"),
        tmp.path().join("migrations/001_init.sql"),
    )
    .expect("copy migration");
    for t in tests {
        let rel = format!("tests/{t}");
        std::fs::copy(src.join(&rel), tmp.path().join(&rel)).expect("copy test");
    }
    tmp
}

/// Every example with a `tests/` directory: both suites run and pass.
#[test]
fn the_examples_pass_in_both_runtimes() {
    let root = example_dir("");
    let mut names: Vec<String> = std::fs::read_dir(&root)
        .expect("examples/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("tests").is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 2, "{names:?}");
    for name in &names {
        let out = cove_test(&example_dir(name));
        let text = stdout(&out);
        assert!(out.status.success(), "{name}:\n{text}");
        // Lua's suite runs first, then JavaScript's, each with a summary.
        let lua = text.find("--- tests/test_app.lua ---").expect("lua suite");
        let js = text.find("--- tests/test_app.js ---").expect("js suite");
        assert!(lua < js, "{text}");
        assert_eq!(text.matches(" tests passed\n").count(), 2, "{text}");
        assert!(!text.contains("FAIL"), "{text}");
    }
}

#[test]
fn passing_suites_exit_zero_with_hulls_output() {
    let app = fixture_with(&["test_pass.lua", "test_pass.js"]);
    let out = cove_test(app.path());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(
            "\n--- tests/test_pass.lua ---\n  PASS  handler only by default, as in Hull\n"
        ),
        "{text}"
    );
    assert!(text.contains("\n7/7 tests passed\n"), "{text}");
    assert!(text.contains("  PASS  async cases are awaited\n"), "{text}");
    assert!(text.contains("\n7/7 tests passed\n"), "{text}");
    // The handler's error is logged where the user sees it.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("app.lua:25: kaboom"), "{err}");
    assert!(err.contains("app.js:26: kaboom"), "{err}");
}

#[test]
fn failures_exit_one_and_name_file_line_and_the_difference() {
    let out = cove_test(&fixture_dir());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for expected in [
        "  FAIL  a deep mismatch\n    tests/test_fail.lua:2: test.eq failed: items\n      expected: {\"items\":[{\"title\":\"a\"},{\"title\":\"c\"}]}\n      actual:   {\"items\":[{\"title\":\"a\"},{\"title\":\"b\"}]}\n      at .items[1].title: expected \"c\", actual \"b\"\n",
        "  FAIL  a falsy value\n    tests/test_fail.lua:6: expected a user\n",
        "  FAIL  an error that does not match\n    tests/test_fail.lua:10: test.err: error 'tests/test_fail.lua:10: other' does not match pattern 'wanted'\n",
        "  PASS  a passing case after failures\n",
        "--- tests/test_broken.lua ---\n  ERROR  the file failed to load\n    tests/test_broken.lua:3:",
        "\n8/12 tests passed, 4 failed\n",
        "  FAIL  a deep mismatch\n    tests/test_fail.js:2: test.eq failed: items\n",
        "  FAIL  a falsy value\n    tests/test_fail.js:6: expected a user\n",
        // Hull lets a rejected async test pass; here it fails.
        "  FAIL  an async rejection fails\n    tests/test_fail.js:11: late failure\n",
        "--- tests/test_broken.js ---\n  ERROR  the file failed to load\n    tests/test_broken.js:2: SyntaxError",
        "\n8/12 tests passed, 4 failed\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
}

#[test]
fn a_directory_without_tests_or_app_is_an_error() {
    let empty = tempfile::tempdir().expect("temp dir");
    let out = cove_test(empty.path());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no entry point found (app.js, app.ts or app.lua)"),
        "{err}"
    );

    let no_tests = fixture_with(&[]);
    let out = cove_test(no_tests.path());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no test files found"), "{err}");
}

#[test]
fn an_app_that_fails_to_load_is_reported_with_its_line() {
    let app = fixture_with(&["test_pass.lua"]);
    std::fs::write(
        app.path().join("app.lua"),
        "app.get('/', function() end)\nerror('no db')\n",
    )
    .expect("write app");
    let out = cove_test(app.path());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed to load app.lua: app.lua:2: no db"),
        "{err}"
    );
}

/// A failing case says which of its requests got a 500 from a raising
/// handler, and what the handler raised, with its file and line.
fn a_failure_after_a_handler_error_names_the_request_and_the_error(lang: Lang) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/testing_handler_error")
        .join(lang.ext());
    let dir_arg = dir.to_str().expect("utf-8 path");
    let ext = lang.ext();
    let app_file = dir.join(format!("app.{ext}"));
    let test_file = dir.join(format!("tests/test_500.{ext}"));
    let app_line = |marker| line_of(&app_file, marker);
    let test_line = |marker| line_of(&test_file, marker);
    let (undefined, nil_global, own_error) = match lang {
        Lang::Lua => (
            "nil",
            "attempt to index a nil value (global 'config')",
            "attempt to index a nil value (field 'json')",
        ),
        Lang::Js => (
            "undefined",
            "ReferenceError: config is not defined",
            "TypeError: cannot read property 'items' of undefined",
        ),
    };
    let missing_table = format!(
        "    GET /items → 500, handler error: app.{ext}:{}: db.query failed: no such table: missing\n",
        app_line("marker: missing table")
    );

    let out = run(&["test", dir_arg]);
    let text = &out.stdout;
    assert_eq!(out.code, Some(1), "{text}\n{}", out.stderr);
    for expected in [
        // The assertion's own lines, then the request and the handler's error.
        format!(
            "  FAIL  a missing table\n    tests/test_500.{ext}:{}: test.eq failed\n      expected: []\n      actual:   {undefined}\n{missing_table}",
            test_line("marker: a missing table")
        ),
        format!(
            "  FAIL  a nil global\n    tests/test_500.{ext}:{}: test.eq failed\n      expected: 200\n      actual:   500\n    GET /nil → 500, handler error: app.{ext}:{}: {nil_global}\n",
            test_line("marker: a nil global"),
            app_line("marker: nil global")
        ),
        // A case that asserted the 500 passes and prints nothing more.
        "  PASS  a case that expects the 500\n  FAIL  ".to_string(),
        // A case that raises itself after such a request.
        format!(
            "  FAIL  a case that errors after the request\n    tests/test_500.{ext}:{}: {own_error}\n{missing_table}",
            test_line("marker: errors after the request")
        ),
        // No handler raised in this case (the file's own request at load
        // time belongs to no case): nothing more.
        format!(
            "  FAIL  a plain failure after a good request\n    tests/test_500.{ext}:{}: plain failure\n\n1/5 tests passed, 4 failed\n",
            test_line("marker: plain failure")
        ),
    ] {
        assert!(text.contains(&expected), "missing {expected:?} in:\n{text}");
    }
    // Each failing case names only its own requests.
    assert_eq!(text.matches(" → 500, handler error: ").count(), 3, "{text}");
}

both!(a_failure_after_a_handler_error_names_the_request_and_the_error);
