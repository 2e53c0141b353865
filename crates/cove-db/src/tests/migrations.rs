use super::*;
use crate::{DbError, MigrationStatus};
use cove_core::AppFiles;
use std::fs;
use std::path::Path;

fn write(dir: &Path, name: &str, sql: &str) {
    fs::write(dir.join(name), sql).expect("write migration");
}

/// The app whose `migrations/` directory is `dir`.
fn app(dir: &Path) -> AppFiles {
    assert!(dir.ends_with("migrations"));
    AppFiles::Dir(dir.parent().expect("parent").to_path_buf())
}

fn recorded(db: &mut Db) -> Vec<Vec<Value>> {
    rows(db, "SELECT name FROM _hull_migrations ORDER BY id", &[])
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_tracking_table_is_created_even_without_a_directory() {
    let mut f = fixture();
    let report =
        f.db.migrate(&app(&f.dir.path().join("migrations")))
            .expect("migrate");
    assert!(report.applied.is_empty() && report.skipped_empty.is_empty());
    let cols = rows(
        &mut f.db,
        "SELECT name FROM pragma_table_info('_hull_migrations') ORDER BY cid",
        &[],
    );
    assert_eq!(
        cols,
        vec![
            vec![text("id")],
            vec![text("name")],
            vec![text("applied_at")]
        ]
    );
}

#[test]
fn pending_sql_files_apply_once_in_bytewise_name_order() {
    let mut f = fixture();
    let dir = f.dir.path().join("migrations");
    fs::create_dir_all(dir.join("099_dir.sql")).expect("mkdir"); // not a file: ignored
    write(&dir, "010_c.sql", "INSERT INTO log VALUES ('c');");
    write(
        &dir,
        "001_a.sql",
        "CREATE TABLE log(step TEXT);\nINSERT INTO log VALUES ('a');",
    );
    write(
        &dir,
        "002_b.sql",
        "-- trigger bodies hold semicolons\nCREATE TABLE n(x);\n\
        CREATE TRIGGER n_log AFTER INSERT ON n BEGIN INSERT INTO log VALUES ('t'); END;\n\
        INSERT INTO log VALUES ('b');",
    );
    write(&dir, "README.txt", "not sql");
    write(
        &dir,
        "003_upper.SQL",
        "not applied: the suffix is case-sensitive",
    );
    write(&dir, ".sql", "too short to count");
    let report = f.db.migrate(&app(&dir)).expect("migrate");
    assert_eq!(
        report.applied,
        names(&["001_a.sql", "002_b.sql", "010_c.sql"])
    );
    let log = rows(&mut f.db, "SELECT step FROM log ORDER BY rowid", &[]);
    assert_eq!(log, vec![vec![text("a")], vec![text("b")], vec![text("c")]]);
    let again = f.db.migrate(&app(&dir)).expect("migrate again");
    assert!(again.applied.is_empty());
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM log"), 3);
    write(&dir, "011_d.sql", "INSERT INTO n VALUES (1);");
    assert_eq!(
        f.db.migrate(&app(&dir)).expect("third run").applied,
        names(&["011_d.sql"])
    );
    assert_eq!(recorded(&mut f.db).len(), 4);
}

#[test]
fn empty_files_are_skipped_and_not_recorded() {
    let mut f = fixture();
    let dir = f.dir.path().join("migrations");
    fs::create_dir(&dir).expect("mkdir");
    write(&dir, "001_empty.sql", "");
    write(&dir, "002_comments.sql", "  -- nothing yet\n/* later */\n");
    write(&dir, "003_real.sql", "CREATE TABLE t(x);");
    let report = f.db.migrate(&app(&dir)).expect("migrate");
    assert_eq!(
        report.skipped_empty,
        names(&["001_empty.sql", "002_comments.sql"])
    );
    assert_eq!(report.applied, names(&["003_real.sql"]));
    assert_eq!(recorded(&mut f.db), vec![vec![text("003_real.sql")]]);
}

#[test]
fn a_failing_migration_rolls_back_and_stops() {
    let mut f = fixture();
    let dir = f.dir.path().join("migrations");
    fs::create_dir(&dir).expect("mkdir");
    write(&dir, "001_ok.sql", "CREATE TABLE a(x);");
    write(
        &dir,
        "002_bad.sql",
        "CREATE TABLE b(x);\nINSERT INTO nope VALUES (1);",
    );
    write(&dir, "003_later.sql", "CREATE TABLE c(x);");
    let err = f.db.migrate(&app(&dir)).expect_err("must fail");
    assert_eq!(err.code(), "db.migration");
    assert_eq!(err.to_string(), "002_bad.sql: no such table: nope");
    assert!(matches!(&err, DbError::Migration { file, .. } if file == "002_bad.sql"));
    assert_eq!(recorded(&mut f.db), vec![vec![text("001_ok.sql")]]);
    let tables = rows(
        &mut f.db,
        "SELECT name FROM sqlite_master WHERE name IN ('a','b','c')",
        &[],
    );
    assert_eq!(tables, vec![vec![text("a")]]);
    assert!(!f.db.in_transaction());
    assert!(!f.db.holds_write_lock());
}

#[test]
fn a_migration_may_not_end_its_own_transaction() {
    let mut f = fixture();
    let dir = f.dir.path().join("migrations");
    fs::create_dir(&dir).expect("mkdir");
    write(
        &dir,
        "001_commit.sql",
        "CREATE TABLE a(x); COMMIT; CREATE TABLE b(x);",
    );
    let err = f.db.migrate(&app(&dir)).expect_err("must fail");
    assert!(
        err.to_string()
            .starts_with("001_commit.sql: the file ended"),
        "{err}"
    );
    assert!(recorded(&mut f.db).is_empty());
    assert!(!f.db.holds_write_lock());
}

#[test]
fn migration_status_lists_every_file_with_applied_at() {
    let mut f = fixture();
    let dir = f.dir.path().join("migrations");
    fs::create_dir(&dir).expect("mkdir");
    write(&dir, "001_a.sql", "CREATE TABLE a(x);");
    write(&dir, "002_b.sql", "CREATE TABLE b(x);");
    let before = f.db.migration_status(&app(&dir)).expect("status before");
    assert_eq!(
        before,
        vec![
            MigrationStatus {
                name: "001_a.sql".into(),
                applied_at: None
            },
            MigrationStatus {
                name: "002_b.sql".into(),
                applied_at: None
            },
        ]
    );
    fs::remove_file(dir.join("002_b.sql")).expect("rm");
    f.db.migrate(&app(&dir)).expect("migrate");
    write(&dir, "002_b.sql", "CREATE TABLE b(x);");
    let after = f.db.migration_status(&app(&dir)).expect("status after");
    assert_eq!(after.len(), 2);
    let stamp = after[0].applied_at.as_deref().expect("001 applied");
    assert_eq!(stamp.len(), "2026-01-01 00:00:00".len(), "{stamp}");
    assert_eq!(
        after[1],
        MigrationStatus {
            name: "002_b.sql".into(),
            applied_at: None
        }
    );
}

#[test]
fn migrations_work_on_memory_databases() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().join("migrations");
    fs::create_dir(&dir).expect("mkdir");
    write(
        &dir,
        "001_a.sql",
        "CREATE TABLE a(x); INSERT INTO a VALUES (1);",
    );
    let mut db = Db::open(Path::new(":memory:"), WriteLock::default()).expect("open");
    assert_eq!(
        db.migrate(&app(&dir)).expect("migrate").applied,
        names(&["001_a.sql"])
    );
    assert_eq!(int(&mut db, "SELECT x FROM a"), 1);
}
