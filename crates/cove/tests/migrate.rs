//! `cove migrate`, `cove migrate status`, `cove migrate new`: Hull's output
//! lines and exit codes (§1.1), run in temporary app directories.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::util::bin;

/// What a finished `cove` run printed.
pub struct Ran {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Panics with both streams unless the exit code is `code`.
    pub fn expect(self, code: i32) -> Ran {
        assert_eq!(
            self.code,
            Some(code),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Run `cove args…` in `cwd` to completion.
pub fn cove_in(cwd: &Path, args: &[&str]) -> Ran {
    let out = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run cove");
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A temp app directory with the given migration files.
fn app_with(migrations: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    if !migrations.is_empty() {
        fs::create_dir(dir.path().join("migrations")).expect("mkdir");
    }
    for (name, sql) in migrations {
        fs::write(dir.path().join("migrations").join(name), sql).expect("write migration");
    }
    dir
}

fn tables(db: &Path) -> Vec<String> {
    let conn = rusqlite::Connection::open(db).expect("open db");
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare");
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .expect("query")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    names
}

const INIT: (&str, &str) = ("001_init.sql", "CREATE TABLE a (x);");
const SECOND: (&str, &str) = (
    "002_more.sql",
    "CREATE TABLE b (y); INSERT INTO b VALUES (1);",
);

#[test]
fn applies_pending_then_is_up_to_date() {
    let app = app_with(&[INIT, SECOND]);
    let ran = cove_in(app.path(), &["migrate"]).expect(0);
    assert_eq!(
        ran.stdout,
        "cove migrate: applied 2 migration(s)\n  001_init.sql\n  002_more.sql\n"
    );
    // The database defaults to data.db in the current directory, as in Hull.
    let db = app.path().join("data.db");
    assert_eq!(
        tables(&db),
        ["_hull_migrations", "a", "b", "sqlite_sequence"]
    );

    let ran = cove_in(app.path(), &["migrate"]).expect(0);
    assert_eq!(ran.stdout, "cove migrate: already up to date\n");

    fs::write(
        app.path().join("migrations/003_c.sql"),
        "CREATE TABLE c (z);",
    )
    .expect("write");
    let ran = cove_in(app.path(), &["migrate"]).expect(0);
    assert_eq!(
        ran.stdout,
        "cove migrate: applied 1 migration(s)\n  003_c.sql\n"
    );
}

#[test]
fn dir_and_db_flags() {
    let app = app_with(&[INIT]);
    let cwd = tempfile::tempdir().expect("cwd");
    let app_arg = app.path().to_str().expect("utf-8");
    cove_in(cwd.path(), &["migrate", app_arg, "-d", "elsewhere.db"]).expect(0);
    assert!(cwd.path().join("elsewhere.db").is_file());
    assert!(!app.path().join("data.db").exists());
    let ran = cove_in(
        cwd.path(),
        &["migrate", "status", app_arg, "-d", "elsewhere.db"],
    )
    .expect(0);
    assert!(ran.stdout.contains("[x] 001_init.sql"), "{}", ran.stdout);
}

#[test]
fn no_migrations_found_creates_nothing() {
    let app = app_with(&[]);
    let ran = cove_in(app.path(), &["migrate"]).expect(0);
    assert_eq!(ran.stdout, "cove migrate: no migrations found\n");
    let ran = cove_in(app.path(), &["migrate", "status"]).expect(0);
    assert_eq!(ran.stdout, "cove migrate: no migrations found\n");
    assert!(!app.path().join("data.db").exists());
}

#[test]
fn failing_sql_exits_1_naming_the_file_and_keeps_earlier_ones() {
    let app = app_with(&[
        INIT,
        (
            "002_bad.sql",
            "CREATE TABLE b (y); INSERT INTO nope VALUES (1);",
        ),
    ]);
    let ran = cove_in(app.path(), &["migrate"]).expect(1);
    assert!(
        ran.stderr.contains(
            "cove migrate: migration failed: migrations/002_bad.sql: no such table: nope"
        ),
        "{}",
        ran.stderr
    );
    // 001 committed; 002 rolled back as a whole (its table b is not there).
    assert_eq!(
        tables(&app.path().join("data.db")),
        ["_hull_migrations", "a", "sqlite_sequence"]
    );
    let status = cove_in(app.path(), &["migrate", "status"]).expect(0).stdout;
    assert!(status.contains("[x] 001_init.sql"), "{status}");
    assert!(status.contains("[ ] 002_bad.sql  (pending)"), "{status}");
}

#[test]
fn status_lists_applied_with_time_and_pending() {
    let app = app_with(&[INIT]);
    // Before any run: everything pending, and looking creates no database.
    let ran = cove_in(app.path(), &["migrate", "status"]).expect(0);
    assert_eq!(ran.stdout, "Migrations:\n  [ ] 001_init.sql  (pending)\n");
    assert!(!app.path().join("data.db").exists());

    cove_in(app.path(), &["migrate"]).expect(0);
    fs::write(app.path().join("migrations").join(SECOND.0), SECOND.1).expect("write");
    let ran = cove_in(app.path(), &["migrate", "status"]).expect(0);
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", ran.stdout);
    assert_eq!(lines[0], "Migrations:");
    // `  [x] 001_init.sql  (YYYY-MM-DD HH:MM:SS)`
    let applied = lines[1]
        .strip_prefix("  [x] 001_init.sql  (")
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{:?}", lines[1]));
    assert_eq!(applied.len(), 19, "{applied}");
    assert_eq!(&applied[4..5], "-");
    assert_eq!(&applied[10..11], " ");
    assert_eq!(lines[2], "  [ ] 002_more.sql  (pending)");
}

#[test]
fn new_numbers_after_the_highest_existing_file() {
    let app = app_with(&[]);
    let ran = cove_in(app.path(), &["migrate", "new", "init"]).expect(0);
    assert_eq!(
        ran.stdout,
        "cove migrate: created migrations/001_init.sql\n"
    );
    let text = fs::read_to_string(app.path().join("migrations/001_init.sql")).expect("read");
    assert_eq!(text, "-- Migration: 001_init.sql\n\n");

    fs::write(app.path().join("migrations/007_jump.sql"), "").expect("write");
    fs::write(app.path().join("migrations/notes.txt"), "").expect("write");
    let ran = cove_in(app.path(), &["migrate", "new", "Add_Tags2"]).expect(0);
    assert_eq!(
        ran.stdout,
        "cove migrate: created migrations/008_Add_Tags2.sql\n"
    );

    // With the app directory given, the path names it.
    let cwd = tempfile::tempdir().expect("cwd");
    let app_arg = app.path().to_str().expect("utf-8");
    let ran = cove_in(cwd.path(), &["migrate", "new", "more", app_arg]).expect(0);
    assert!(
        ran.stdout.ends_with("/migrations/009_more.sql\n") && ran.stdout.contains(app_arg),
        "{}",
        ran.stdout
    );
}

#[test]
fn new_refuses_an_invalid_name() {
    let app = app_with(&[]);
    for bad in ["add-tags", "a b", "../x"] {
        let ran = cove_in(app.path(), &["migrate", "new", bad]).expect(1);
        assert_eq!(
            ran.stderr,
            format!("cove migrate: invalid name '{bad}' (use alphanumeric + underscores)\n")
        );
    }
    assert!(!app.path().join("migrations").exists());
}

#[test]
fn a_missing_app_directory_is_named() {
    let cwd = tempfile::tempdir().expect("cwd");
    let ran = cove_in(cwd.path(), &["migrate", "nope"]).expect(1);
    assert!(
        ran.stderr
            .starts_with("cove migrate: nope is not a directory"),
        "{}",
        ran.stderr
    );
}
