//! Errors a new user meets in the first hour: each names the place (file
//! and line, or the path) once, and says what to do; a failed start leaves
//! no database behind and applies no migration.

use std::path::{Path, PathBuf};

use crate::util::{run, Exit, Server};

/// An app directory holding `files` (path, text).
fn app(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("app");
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    (tmp, dir)
}

/// `cove -p 0 -d <db> <dir>`, expected to fail.
fn refused(dir: &Path, db: &Path) -> String {
    let r = run(&["-p", "0", "-d", db.to_str().unwrap(), dir.to_str().unwrap()]);
    assert_eq!(
        r.code,
        Some(1),
        "stdout: {}\nstderr: {}",
        r.stdout,
        r.stderr
    );
    r.stderr
}

const JS_OK: &str =
    "import { app } from \"hull:app\";\napp.get(\"/\", (req, res) => res.json({}));\n";

#[test]
fn an_unknown_hull_module_names_the_import_line_and_the_near_name() {
    let (tmp, dir) = app(&[(
        "app.js",
        &format!("{JS_OK}import {{ time }} from \"hull:times\";\n"),
    )]);
    let err = refused(&dir, &tmp.path().join("data.db"));
    assert!(
        err.contains("app.js:3: ReferenceError: unknown hull module: hull:times"),
        "{err}"
    );
    assert!(err.contains("did you mean hull:time?"), "{err}");
    assert!(
        err.contains("hull:app") && err.contains("hull:validate"),
        "{err}"
    );

    let lua = "app.get('/', function(req, res) res:json({}) end)\nlocal v = require(\"hull.validator\")\n";
    let (tmp, dir) = app(&[("app.lua", lua)]);
    let err = refused(&dir, &tmp.path().join("data.db"));
    assert!(
        err.contains("app.lua:2: module not found: hull.validator"),
        "{err}"
    );
    assert!(err.contains("did you mean hull.validate?"), "{err}");
    assert!(err.contains("hull.middleware.cors"), "{err}");
}

#[test]
fn a_missing_app_module_names_the_importing_line() {
    let text = format!("{JS_OK}\nimport {{ x }} from \"./lib/nope.js\";\n");
    let (tmp, dir) = app(&[("app.js", &text)]);
    let err = refused(&dir, &tmp.path().join("data.db"));
    assert!(
        err.contains("app.js:4: ReferenceError: cannot import ./lib/nope.js: no file lib/nope.js in the app directory"),
        "{err}"
    );
}

#[test]
fn a_json_parse_error_in_a_handler_names_the_app_line() {
    let text = "import { app } from \"hull:app\";\napp.post(\"/raw\", (req, res) => {\n  res.json(JSON.parse(req.body));\n});\n";
    let (_tmp, dir) = app(&[("app.js", text)]);
    let s = Server::start(&dir.join("app.js"), &[]);
    assert_eq!(s.post("/raw", "{x").status, 500);
    let log = s.wait_for_log("POST /raw");
    assert!(log.contains("POST /raw: app.js:3: SyntaxError:"), "{log}");
    assert!(!log.contains("<input>"), "{log}");
}

#[test]
fn an_app_that_fails_to_load_creates_no_database() {
    let (tmp, dir) = app(&[
        (
            "app.lua",
            "app.get('/', function() end)\nerror('cannot boot')\n",
        ),
        ("migrations/001_init.sql", "CREATE TABLE t (x);\n"),
    ]);
    let db = tmp.path().join("data.db");
    let err = refused(&dir, &db);
    assert!(err.contains("app.lua:2: cannot boot"), "{err}");
    assert!(!db.exists(), "a refused start left {}", db.display());
    assert!(!err.contains("migration"), "{err}");
}

#[test]
fn pending_migrations_wait_for_an_app_that_loads() {
    let (tmp, dir) = app(&[
        (
            "app.lua",
            "app.get('/', function(req, res) res:json({}) end)\n",
        ),
        ("migrations/001_init.sql", "CREATE TABLE t (x);\n"),
    ]);
    let db = tmp.path().join("data.db");
    let migrate = run(&["migrate", dir.to_str().unwrap(), "-d", db.to_str().unwrap()]);
    assert_eq!(migrate.code, Some(0), "{}", migrate.stderr);
    std::fs::write(dir.join("migrations/002_more.sql"), "CREATE TABLE u (y);\n").unwrap();
    std::fs::write(
        dir.join("app.lua"),
        "app.get('/', function() end)\nlocal x = nil + 1\n",
    )
    .unwrap();

    let err = refused(&dir, &db);
    assert!(err.contains("app.lua:2:"), "{err}");
    let status = run(&[
        "migrate",
        "status",
        dir.to_str().unwrap(),
        "-d",
        db.to_str().unwrap(),
    ]);
    assert!(
        status.stdout.contains("[ ] 002_more.sql"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("[x] 001_init.sql"),
        "{}",
        status.stdout
    );
}

#[test]
fn an_app_whose_load_reads_migrated_tables_still_starts() {
    // The check loads the app against a scratch copy of the schema, so
    // load-time queries see the tables the migrations make.
    let lua = "local n = db.query('SELECT count(*) AS n FROM t')[1].n\napp.get('/', function(req, res) res:json({ n = n }) end)\n";
    let (_tmp, dir) = app(&[
        ("app.lua", lua),
        ("migrations/001_init.sql", "CREATE TABLE t (x);\n"),
    ]);
    let s = Server::start(&dir.join("app.lua"), &[]);
    assert_eq!(s.get("/").text(), "{\"n\":0}");
}

#[test]
fn a_database_in_a_missing_directory_says_which_and_what_to_do() {
    let (_tmp, dir) = app(&[("app.js", JS_OK)]);
    let err = refused(&dir, Path::new("/nonexistent-dir/data.db"));
    assert_eq!(err.matches("cannot open database").count(), 1, "{err}");
    assert!(
        err.contains("cannot open database /nonexistent-dir/data.db: directory /nonexistent-dir does not exist; create it first"),
        "{err}"
    );
}

fn build(args: &[&str]) -> Exit {
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    run(&all)
}

#[test]
fn build_into_a_missing_directory_says_so() {
    let (_tmp, dir) = app(&[("app.js", JS_OK)]);
    let d = dir.to_str().unwrap();
    let r = build(&["-o", "/nonexistent-dir/out/", d]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr
            .contains("-o /nonexistent-dir/out/: no such directory; create it first"),
        "{}",
        r.stderr
    );
    let r = build(&["-o", "/nonexistent-dir/server", d]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr
            .contains("-o /nonexistent-dir/server: directory /nonexistent-dir does not exist"),
        "{}",
        r.stderr
    );
}

#[test]
fn build_leaves_out_tests_and_readme_unless_included() {
    let (tmp, dir) = app(&[
        ("app.js", JS_OK),
        ("README.md", "# app\n"),
        ("tests/test_app.js", "test('x', () => {});\n"),
        ("static/guide.md", "served\n"),
        ("scripts/seed.sh", "echo\n"),
    ]);
    let d = dir.to_str().unwrap();
    let listed = |extra: &[&str]| {
        let mut args = vec!["--list"];
        args.extend_from_slice(extra);
        args.push(d);
        let r = build(&args);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        r.stdout
    };
    let plain = listed(&[]);
    assert!(
        plain.contains("app.js") && plain.contains("static/guide.md"),
        "{plain}"
    );
    assert!(plain.contains("scripts/seed.sh"), "{plain}");
    assert!(
        !plain.contains("README.md") && !plain.contains("tests/"),
        "{plain}"
    );

    let tuned = listed(&["--exclude", "scripts", "--include", "tests/**"]);
    assert!(!tuned.contains("scripts/seed.sh"), "{tuned}");
    assert!(tuned.contains("tests/test_app.js"), "{tuned}");

    let out = tmp.path().join("server");
    let r = build(&["-o", out.to_str().unwrap(), d]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr.contains("note: left out README.md, tests/"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_mistyped_command_gets_a_suggestion_and_serve_is_a_command() {
    let r = run(&["tset"]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr
            .contains("tset: no such file or directory; did you mean test?"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("migrate"), "{}", r.stderr);

    let (_tmp, dir) = app(&[("app.js", JS_OK)]);
    // `cove serve --workers 2 -p 0 -d … DIR`
    let s = Server::start(&dir, &["serve"]);
    assert_eq!(s.get("/").status, 200);
}

#[test]
fn help_shows_the_budget_without_an_empty_env_value() {
    let r = run(&["--help"]);
    assert!(
        r.stdout.contains("[env: HULL_MAX_INSTRUCTIONS]"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("HULL_MAX_INSTRUCTIONS="), "{}", r.stdout);
    assert!(!r.stdout.contains("0 = default"), "{}", r.stdout);
}
