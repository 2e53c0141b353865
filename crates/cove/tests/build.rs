//! `cove build`: one executable serving the app with its sources gone,
//! `--version`/`--help` naming the app, `--list`, rebuilds, refusals.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{run, run_exe, Exit, Server};

fn workspace(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Copy the files of `from` into `to` (created), skipping names in `skip`.
fn copy_dir(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if skip.contains(&name.as_str()) {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(&name), &[]);
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

pub(crate) fn ok(exit: &Exit) {
    assert_eq!(
        exit.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        exit.stdout,
        exit.stderr
    );
}

pub(crate) fn failed(exit: &Exit) -> &str {
    assert_eq!(exit.code, Some(1), "stdout:\n{}", exit.stdout);
    &exit.stderr
}

/// `cove build -o <out> <dir>`; panics unless it succeeds.
fn build(dir: &Path, out: &Path) -> Exit {
    let exit = run(&["build", "-o", out.to_str().unwrap(), dir.to_str().unwrap()]);
    ok(&exit);
    exit
}

/// Build a copy of `src` (less `skip`) named `name`, delete the copy and
/// return the executable; `keep` holds the temp dir of the executable.
fn built_without_sources(
    src: &Path,
    name: &str,
    skip: &[&str],
    keep: &tempfile::TempDir,
) -> PathBuf {
    let sources = tempfile::tempdir().unwrap();
    let dir = sources.path().join(name);
    copy_dir(src, &dir, skip);
    let exe = keep.path().join(name);
    build(&dir, &exe);
    drop(sources);
    assert!(!dir.exists());
    exe
}

/// The same requests against any server, with times left out of the answers.
fn rest_api_session(s: &Server) -> Vec<(u16, Value)> {
    fn strip(mut v: Value) -> Value {
        match &mut v {
            Value::Array(items) => items.iter_mut().for_each(|i| *i = strip(i.take())),
            Value::Object(map) => {
                map.remove("created_at");
            }
            _ => {}
        }
        v
    }
    let mut out = Vec::new();
    let mut record = |r: crate::util::Response| out.push((r.status, strip(r.json())));
    record(s.post("/tasks", r#"{"title":"write docs"}"#));
    record(s.post("/tasks", r#"{"title":"ship it"}"#));
    record(s.post("/tasks", "not json"));
    record(s.get("/tasks"));
    record(s.get("/tasks/1"));
    record(s.request("PUT", "/tasks/1", &[], Some(br#"{"done":true}"#)));
    record(s.request("DELETE", "/tasks/2", &[], None));
    record(s.get("/tasks"));
    record(s.get("/tasks/2"));
    out
}

fn rest_api_serves_like_its_directory(ext: &str) {
    let other = if ext == "lua" { "app.js" } else { "app.lua" };
    let bin = tempfile::tempdir().unwrap();
    let exe = built_without_sources(&workspace("examples/rest_api"), "rest_api", &[other], &bin);

    let built = Server::start_exe(&exe, &[]).unwrap_or_else(|log| panic!("{log}"));
    // The migration came from the pack: the first POST needs its table.
    assert!(
        built.log().contains("migration applied: 001_init.sql"),
        "{}",
        built.log()
    );
    let got = rest_api_session(&built);
    assert_eq!(
        got[0],
        (201, json!({"id": 1, "title": "write docs", "done": 0}))
    );
    assert_eq!(got[7].1.as_array().map(Vec::len), Some(1), "{got:?}");

    let from_dir = Server::start(&workspace(&format!("examples/rest_api/app.{ext}")), &[]);
    assert_eq!(got, rest_api_session(&from_dir));
}

#[test]
fn built_lua_app_serves_without_its_sources() {
    rest_api_serves_like_its_directory("lua");
}

#[test]
fn built_js_app_serves_without_its_sources() {
    rest_api_serves_like_its_directory("js");
}

#[test]
fn version_and_help_name_the_app_and_app_paths_are_refused() {
    let bin = tempfile::tempdir().unwrap();
    let exe = built_without_sources(&workspace("examples/hello"), "hello", &["app.js"], &bin);

    let v = run_exe(&exe, &["--version"]);
    ok(&v);
    // The binary under test's own version: a profile-guided one says so.
    let own = run(&["--version"]);
    let cove = own.stdout.trim().strip_prefix("cove ").unwrap_or("?");
    assert!(cove.starts_with(env!("CARGO_PKG_VERSION")), "{cove}");
    assert_eq!(v.stdout.trim(), format!("hello (built with cove {cove})"));

    let h = run_exe(&exe, &["--help"]);
    ok(&h);
    assert!(h.stdout.contains("Serves the app hello"), "{}", h.stdout);
    for flag in ["--port", "--db", "--workers", "--no-migrate"] {
        assert!(h.stdout.contains(flag), "{flag} missing:\n{}", h.stdout);
    }
    assert!(!h.stdout.contains("[APP]"), "{}", h.stdout);

    let err = failed(&run_exe(&exe, &["-p", "0", "elsewhere/app.lua"])).to_string();
    assert!(
        err.contains("hello: ")
            && err.contains("takes no APP argument")
            && err.contains("elsewhere/app.lua"),
        "{err}"
    );
    let err = failed(&run_exe(&exe, &["--build"])).to_string();
    assert!(err.contains("--build"), "{err}");
}

#[test]
fn list_shows_what_a_directory_would_pack_and_what_an_executable_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("rest_api");
    copy_dir(&workspace("examples/rest_api"), &dir, &["tests"]);
    std::fs::write(dir.join("data.db"), "not packed").unwrap();
    std::fs::create_dir(dir.join(".git")).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "not packed").unwrap();

    let listed = run(&["build", "--list", dir.to_str().unwrap()]);
    ok(&listed);
    let size = |f: &str| std::fs::metadata(dir.join(f)).unwrap().len();
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert!(lines[0].starts_with("rest_api (from "), "{}", listed.stdout);
    assert!(lines[0].contains(": 4 files, "), "{}", listed.stdout);
    let rows: Vec<(u64, &str)> = lines[1..]
        .iter()
        .map(|l| {
            let (n, p) = l.trim().split_once("  ").unwrap();
            (n.parse().unwrap(), p)
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (size("app.js"), "app.js"),
            (size("app.lua"), "app.lua"),
            (
                size("migrations/001_init.postgres.sql"),
                "migrations/001_init.postgres.sql"
            ),
            (size("migrations/001_init.sql"), "migrations/001_init.sql"),
        ]
    );

    let exe = tmp.path().join("server");
    build(&dir, &exe);
    let inside = run(&["build", "--list", exe.to_str().unwrap()]);
    ok(&inside);
    assert_eq!(
        inside.stdout.lines().skip(1).collect::<Vec<_>>(),
        lines[1..].to_vec(),
        "{}",
        inside.stdout
    );
    assert!(
        inside.stdout.starts_with("rest_api (built into "),
        "{}",
        inside.stdout
    );
}

#[test]
fn a_rebuild_does_not_pack_the_previous_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shop");
    copy_dir(&workspace("examples/hello"), &dir, &["tests"]);
    let d = dir.to_str().unwrap();

    // Default output: <dir>/<dir name>, inside the app directory itself.
    let first = run(&["build", d]);
    ok(&first);
    let exe = dir.join("shop");
    assert!(first.stdout.contains("shop"), "{}", first.stdout);
    let size = std::fs::metadata(&exe).unwrap().len();

    let second = run(&["build", d]);
    ok(&second);
    assert!(second.stderr.contains("skipped shop"), "{}", second.stderr);
    assert_eq!(std::fs::metadata(&exe).unwrap().len(), size);
    let listed = run(&["build", "--list", exe.to_str().unwrap()]);
    ok(&listed);
    assert!(
        !listed.stdout.lines().any(|l| l.ends_with(" shop")),
        "{}",
        listed.stdout
    );
}

#[test]
fn modules_and_json_load_from_the_pack_and_stay_confined() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let bin = tempfile::tempdir().unwrap();

    // Lua: require of ./lib/util (which requires a sibling) and ./data.json;
    // `require("../outside")` is refused, even with the file present beside
    // the executable.
    let lua = built_without_sources(&fixtures.join("sandbox"), "sandbox", &[], &bin);
    std::fs::write(bin.path().join("outside.lua"), "return 'escaped'").unwrap();
    let s = Server::start_exe(&lua, &["--workers", "1"]).unwrap_or_else(|log| panic!("{log}"));
    assert_eq!(s.get("/util").json(), json!({"shout": "HI!"}));
    assert_eq!(s.get("/data").json()["numbers"], json!([1, 2, 3]));
    let outside = s.get("/outside").json();
    assert_eq!(outside["ok"], false, "{outside}");
    assert!(
        !outside["err"].as_str().unwrap().contains("escaped"),
        "{outside}"
    );

    // JavaScript: relative imports and a JSON module.
    let js = built_without_sources(&fixtures.join("js"), "jsapp", &[], &bin);
    let s = Server::start_exe(&js, &["--workers", "1"]).unwrap_or_else(|log| panic!("{log}"));
    assert_eq!(
        s.get("/modules").json(),
        json!({"shout": "HI!", "data": {"name": "cove", "list": [1, 2, 3]}})
    );
}

#[test]
fn a_symlink_out_of_the_app_is_refused_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("app");
    copy_dir(&workspace("examples/hello"), &dir, &["tests", "app.js"]);
    std::fs::write(tmp.path().join("secret.txt"), "s3cret").unwrap();
    std::os::unix::fs::symlink(tmp.path().join("secret.txt"), dir.join("secret.txt")).unwrap();
    let out = tmp.path().join("out");
    let r = run(&["build", "-o", out.to_str().unwrap(), dir.to_str().unwrap()]);
    let err = failed(&r);
    assert!(
        err.contains("secret.txt") && err.contains("links out of the app directory"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn bad_input_exits_1_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p).to_str().unwrap().to_string();

    let err = failed(&run(&["build", &t("missing")])).to_string();
    assert!(err.contains("missing: no such directory"), "{err}");

    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let err = failed(&run(&["build", &t("empty")])).to_string();
    assert!(
        err.contains("no entry point found (app.js, app.ts or app.lua)"),
        "{err}"
    );
    let err = failed(&run(&["build", "--list", &t("empty")])).to_string();
    assert!(err.contains("no entry point found"), "{err}");

    std::fs::write(tmp.path().join("notes.txt"), "hello").unwrap();
    let err = failed(&run(&["build", &t("notes.txt")])).to_string();
    assert!(
        err.contains("is a file; cove build packs an app directory"),
        "{err}"
    );
    let err = failed(&run(&["build", "--list", &t("notes.txt")])).to_string();
    assert!(
        err.contains("notes.txt is not an executable written by cove build"),
        "{err}"
    );

    // -o naming one of the app's own files would overwrite it.
    let dir = tmp.path().join("app");
    copy_dir(&workspace("examples/hello"), &dir, &["tests", "app.js"]);
    let entry = dir.join("app.lua");
    let before = std::fs::read(&entry).unwrap();
    let r = run(&[
        "build",
        "-o",
        entry.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert!(
        failed(&r).contains("would overwrite the app's own file app.lua"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&entry).unwrap(), before);
}
