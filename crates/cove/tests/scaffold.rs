//! `cove new`: the scaffold of each runtime passes its own tests under
//! `cove test`, serves its routes, and an existing directory is never touched.

use std::fs;
use std::path::Path;

use serde_json::json;

use crate::migrate::cove_in;
use crate::util::Server;

const RUNTIMES: [&str; 3] = ["lua", "js", "ts"];

/// `cove new app --runtime <rt>` in a fresh directory; returns it.
fn scaffold(runtime: &str) -> tempfile::TempDir {
    let cwd = tempfile::tempdir().expect("cwd");
    let ran = cove_in(cwd.path(), &["new", "app", "--runtime", runtime]).expect(0);
    assert!(
        ran.stdout.contains("cd app && cove test && cove dev"),
        "next steps: {}",
        ran.stdout
    );
    cwd
}

#[test]
fn writes_the_files_of_each_runtime() {
    for rt in RUNTIMES {
        let cwd = scaffold(rt);
        let app = cwd.path().join("app");
        for rel in [
            format!("app.{rt}"),
            format!("tests/test_app.{rt}"),
            "migrations/001_init.sql".into(),
            ".gitignore".into(),
            "README.md".into(),
            ".cove/types/hull.d.ts".into(),
            ".cove/types/lua/globals.lua".into(),
            match rt {
                "lua" => ".luarc.json".into(),
                "js" => "jsconfig.json".into(),
                _ => "tsconfig.json".into(),
            },
        ] {
            assert!(app.join(&rel).is_file(), "{rt}: {rel} missing");
        }
        let other = if rt == "lua" { "js" } else { "lua" };
        assert!(!app.join(format!("app.{other}")).exists(), "{rt}");
        let ignore = fs::read_to_string(app.join(".gitignore")).expect("read");
        assert!(ignore.lines().any(|l| l == "data.db*"), "{ignore}");
        assert!(ignore.lines().any(|l| l == "/app"), "{ignore}");
    }
}

#[test]
fn its_tests_pass_under_cove_test() {
    for rt in RUNTIMES {
        let cwd = scaffold(rt);
        let ran = cove_in(&cwd.path().join("app"), &["test"]);
        assert_eq!(
            ran.code,
            Some(0),
            "{rt}: stdout:\n{}\nstderr:\n{}",
            ran.stdout,
            ran.stderr
        );
        assert!(ran.stdout.contains("tests passed"), "{rt}: {}", ran.stdout);
        assert!(!ran.stdout.contains("FAIL"), "{rt}: {}", ran.stdout);
    }
}

#[test]
fn it_serves_its_routes() {
    for rt in RUNTIMES {
        let cwd = scaffold(rt);
        let server = Server::start(&cwd.path().join("app").join(format!("app.{rt}")), &[]);

        let r = server.get("/health");
        assert_eq!(
            (r.status, r.json()),
            (200, json!({ "status": "ok" })),
            "{rt}"
        );

        let r = server.post("/notes", r#"{"text":"first"}"#);
        assert_eq!(r.status, 201, "{rt}: {}", r.text());
        assert_eq!(r.json(), json!({ "id": 1, "text": "first" }), "{rt}");
        assert_eq!(server.post("/notes", "{}").status, 400, "{rt}");

        let r = server.get("/notes/1");
        assert_eq!(r.json()["text"], "first", "{rt}");
        assert!(r.json()["created_at"].is_i64(), "{rt}: {}", r.text());
        assert_eq!(
            server.get("/notes").json().as_array().map(Vec::len),
            Some(1)
        );

        let del = server.request("DELETE", "/notes/1", &[], None);
        assert_eq!(del.json(), json!({ "ok": true }), "{rt}");
        assert_eq!(server.get("/notes/1").status, 404, "{rt}");
    }
}

#[test]
fn an_existing_directory_is_refused_and_left_alone() {
    let cwd = tempfile::tempdir().expect("cwd");
    cove_in(cwd.path(), &["new", "x"]).expect(0);
    fs::write(cwd.path().join("x/app.lua"), "-- mine").expect("edit");
    let ran = cove_in(cwd.path(), &["new", "x", "--runtime", "js"]).expect(1);
    assert!(
        ran.stderr.contains("cove new: x already exists"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        fs::read_to_string(cwd.path().join("x/app.lua")).expect("read"),
        "-- mine"
    );
    assert!(!cwd.path().join("x/app.js").exists());
}

#[test]
fn names_and_nested_paths() {
    let cwd = tempfile::tempdir().expect("cwd");
    let ran = cove_in(cwd.path(), &["new", "a b"]).expect(1);
    assert!(ran.stderr.contains("invalid app name"), "{}", ran.stderr);
    assert!(!cwd.path().join("a b").exists());

    // Parents are made; the name is the last part.
    cove_in(cwd.path(), &["new", "apps/blog"]).expect(0);
    let ignore =
        fs::read_to_string(Path::new(cwd.path()).join("apps/blog/.gitignore")).expect("read");
    assert!(ignore.contains("/blog\n"), "{ignore}");
}

/// What the scaffold's README tells a user to run leaves git clean: the
/// executable `cove build` writes and the database are both ignored, and
/// the build leaves the tests and README out.
#[test]
fn its_readme_steps_leave_nothing_for_git_to_track() {
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no git");
        return;
    }
    let cwd = scaffold("lua");
    let app = cwd.path().join("app");
    let readme = fs::read_to_string(app.join("README.md")).expect("readme");
    assert!(
        readme.contains("cove build ") && readme.contains("./app -p 8080"),
        "{readme}"
    );
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&app)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    let before = git(&["status", "--porcelain", "--untracked-files=all"]);
    let built = cove_in(&app, &["build"]).expect(0);
    assert!(
        built.stderr.contains("left out README.md, tests/"),
        "{}",
        built.stderr
    );
    assert!(app.join("app").is_file());
    fs::write(app.join("data.db"), "x").unwrap();
    fs::write(app.join("data.db-wal"), "x").unwrap();
    let after = git(&["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(
        before, after,
        "new untracked files after the README's steps"
    );
}

/// The editor types type-check the scaffolds with the real `tsc`: the
/// TypeScript one with its tsconfig.json (strict), the JavaScript one with
/// its jsconfig.json (checkJs). Needs Node's `npx` (and the npm registry the
/// first time); skipped without it unless COVE_REQUIRE_NODE is set (CI).
#[test]
fn the_scaffolds_type_check_with_tsc() {
    if std::process::Command::new("npx")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("COVE_REQUIRE_NODE").is_none(),
            "COVE_REQUIRE_NODE is set but npx is not installed"
        );
        eprintln!("skipped: no npx");
        return;
    }
    for (rt, config) in [("ts", "tsconfig.json"), ("js", "jsconfig.json")] {
        let cwd = scaffold(rt);
        let out = std::process::Command::new("npx")
            .args(["--yes", "-p", "typescript@5.9", "tsc", "-p", config])
            .current_dir(cwd.path().join("app"))
            .output()
            .expect("npx");
        assert!(
            out.status.success(),
            "{rt}: tsc -p {config}:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn cove_types_refreshes_the_types_and_keeps_a_config() {
    let cwd = scaffold("lua");
    let app = cwd.path().join("app");
    fs::remove_dir_all(app.join(".cove")).expect("rm");
    fs::write(app.join(".luarc.json"), "{}").expect("write");
    let ran = cove_in(&app, &["types"]).expect(0);
    assert!(ran.stdout.contains("type files"), "{}", ran.stdout);
    assert!(app.join(".cove/types/lua/hull/kv.lua").is_file());
    assert_eq!(fs::read_to_string(app.join(".luarc.json")).unwrap(), "{}");
}
