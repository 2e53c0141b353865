//! The database guard (SQLite's authorizer): what app code, the stdlib and
//! migrations may do, whatever the SQL text looks like.

use super::*;
use crate::DbError;
use std::fs;

/// A database with a reserved table holding a secret and an app table.
fn seeded() -> Fixture {
    let mut f = fixture();
    exec(
        &mut f.db,
        "CREATE TABLE _hull_sessions(id TEXT, data TEXT);
         INSERT INTO _hull_sessions VALUES ('s1', 'secret');
         CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT)",
    );
    f
}

fn app_exec(db: &mut Db, sql: &str) -> Result<u64, DbError> {
    db.exec(sql, &[], Origin::App)
}

fn app_rows(db: &mut Db, sql: &str) -> Result<Vec<Vec<Value>>, DbError> {
    let mut out = Vec::new();
    db.query(sql, &[], Origin::App, |_, row| {
        out.push((0..row.len()).map(|i| Value::from(row.get(i))).collect());
        Ok(())
    })?;
    Ok(out)
}

fn assert_reserved(result: Result<impl std::fmt::Debug, DbError>, what: &str) {
    match result {
        Err(DbError::Reserved) => {}
        other => panic!("{what}: want the reserved-table error, got {other:?}"),
    }
}

fn denied(result: Result<impl std::fmt::Debug, DbError>, what: &str) -> String {
    match result {
        Err(e @ DbError::Denied(_)) => {
            assert_eq!(e.code(), "db.denied");
            e.to_string()
        }
        other => panic!("{what}: want a denial, got {other:?}"),
    }
}

#[test]
fn a_view_over_a_reserved_table_does_not_let_app_code_read_it() {
    let mut f = seeded();
    // A migration (stdlib rights) made the view; its name is not reserved.
    exec(
        &mut f.db,
        "CREATE VIEW peek AS SELECT * FROM _hull_sessions",
    );
    assert_reserved(app_rows(&mut f.db, "SELECT data FROM peek"), "view");
    assert_reserved(app_rows(&mut f.db, "SELECT count(*) FROM peek"), "count");
    // App code may even make such a view; it still cannot read through it.
    app_exec(
        &mut f.db,
        "CREATE VIEW mine AS SELECT * FROM _hull_sessions",
    )
    .expect("create");
    assert_reserved(app_rows(&mut f.db, "SELECT * FROM mine"), "own view");
}

#[test]
fn a_trigger_does_not_let_app_code_write_a_reserved_table() {
    let mut f = seeded();
    exec(
        &mut f.db,
        "CREATE TRIGGER plant AFTER INSERT ON items BEGIN
           INSERT INTO _hull_sessions VALUES ('forged', new.name);
         END",
    );
    assert_reserved(
        app_exec(&mut f.db, "INSERT INTO items(name) VALUES ('x')"),
        "trigger",
    );
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM _hull_sessions"), 1);
    assert_reserved(
        app_exec(
            &mut f.db,
            "CREATE TRIGGER t2 AFTER DELETE ON _hull_sessions BEGIN SELECT 1; END",
        ),
        "trigger on a reserved table",
    );
}

#[test]
fn writable_schema_cannot_be_turned_on() {
    let mut f = seeded();
    let msg = denied(app_exec(&mut f.db, "PRAGMA writable_schema = 1"), "set");
    assert!(msg.contains("PRAGMA writable_schema"), "{msg}");
    // Nor by the stdlib or a migration: only Cove's own code is trusted with it.
    denied(
        f.db.exec("PRAGMA writable_schema = ON", &[], Origin::Stdlib),
        "stdlib",
    );
    assert_eq!(
        app_rows(&mut f.db, "PRAGMA writable_schema").unwrap().len(),
        1
    );
}

#[test]
fn other_database_files_are_out_of_reach() {
    let mut f = seeded();
    let elsewhere = f.dir.path().join("elsewhere.db");
    let copy = f.dir.path().join("copy.db");
    let attach = format!("ATTACH DATABASE '{}' AS other", elsewhere.display());
    let vacuum = format!("VACUUM INTO '{}'", copy.display());
    let msg = denied(app_exec(&mut f.db, &attach), "attach");
    assert!(msg.contains("ATTACH"), "{msg}");
    // VACUUM INTO is refused as it runs (it attaches its target then).
    denied(app_exec(&mut f.db, &vacuum), "vacuum into");
    denied(
        f.db.exec(&vacuum, &[], Origin::Stdlib),
        "vacuum into, stdlib",
    );
    denied(app_exec(&mut f.db, "DETACH DATABASE other"), "detach");
    let msg = denied(app_exec(&mut f.db, "VACUUM"), "plain vacuum attaches too");
    assert!(msg.contains("or VACUUM"), "{msg}");
    assert!(!elsewhere.exists() && !copy.exists(), "no file was written");
}

#[test]
fn extensions_cannot_be_loaded() {
    let mut f = seeded();
    let msg = denied(
        app_rows(&mut f.db, "SELECT load_extension('/tmp/evil.so')"),
        "load_extension",
    );
    assert!(msg.contains("load_extension()"), "{msg}");
}

#[test]
fn settings_cove_makes_may_be_read_but_not_changed() {
    let mut f = seeded();
    for sql in [
        "PRAGMA journal_mode = DELETE",
        "PRAGMA main.journal_mode = OFF",
        "PRAGMA synchronous = OFF",
        "PRAGMA locking_mode = EXCLUSIVE",
        "PRAGMA foreign_keys = OFF",
        "PRAGMA cache_size = 1",
    ] {
        let msg = denied(app_exec(&mut f.db, sql), sql);
        assert!(msg.contains("may read PRAGMA"), "{sql}: {msg}");
    }
    let msg = denied(
        app_exec(&mut f.db, "PRAGMA wal_checkpoint(TRUNCATE)"),
        "checkpoint",
    );
    assert!(msg.contains("not available"), "{msg}");
    assert_eq!(
        app_rows(&mut f.db, "PRAGMA journal_mode").unwrap(),
        [vec![text("wal")]]
    );
    assert_eq!(
        app_rows(&mut f.db, "PRAGMA synchronous").unwrap(),
        [vec![Value::Integer(1)]]
    );
    // Restating Cove's own setting changes nothing and is allowed.
    app_exec(
        &mut f.db,
        "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON",
    )
    .expect("same");
    // The app's own values and the schema are the app's.
    app_exec(&mut f.db, "PRAGMA user_version = 7").expect("user_version");
    assert_eq!(int(&mut f.db, "PRAGMA user_version"), 7);
    let cols = app_rows(&mut f.db, "SELECT name FROM pragma_table_info('items')").unwrap();
    assert_eq!(cols, [vec![text("id")], vec![text("name")]]);
    // Cove's tools may do what they need.
    as_cove(&mut f.db, "PRAGMA busy_timeout = 1000");
}

#[test]
fn tables_may_not_be_renamed_by_app_code_but_columns_may() {
    let mut f = seeded();
    let msg = denied(
        app_exec(
            &mut f.db,
            "ALTER TABLE items RENAME TO _hull_idempotency_keys",
        ),
        "rename",
    );
    assert!(msg.contains("rename them in a migration"), "{msg}");
    app_exec(&mut f.db, "ALTER TABLE items RENAME COLUMN name TO title").expect("column");
    app_exec(&mut f.db, "ALTER TABLE items ADD COLUMN done INTEGER").expect("add");
    exec(&mut f.db, "ALTER TABLE items RENAME TO things"); // a migration may
}

#[test]
fn a_statement_the_stdlib_prepared_is_not_handed_to_app_code() {
    let mut f = seeded();
    let sql = "SELECT data FROM _hull_sessions WHERE id = 's1'";
    assert_reserved(app_rows(&mut f.db, sql), "before");
    assert_eq!(rows(&mut f.db, sql, &[]), [vec![text("secret")]]);
    // Now cached: app code is still refused it, without preparing again.
    assert_reserved(app_rows(&mut f.db, sql), "cached");
    assert_reserved(app_exec(&mut f.db, sql), "cached, exec");
    // A statement app code prepared serves the stdlib too.
    let own = "SELECT count(*) FROM items";
    assert_eq!(app_rows(&mut f.db, own).unwrap(), [vec![Value::Integer(0)]]);
    assert_eq!(int(&mut f.db, own), 0);
    assert_eq!(app_rows(&mut f.db, own).unwrap(), [vec![Value::Integer(0)]]);
}

#[test]
fn a_cached_statement_is_checked_again_when_the_schema_changes_under_it() {
    let mut f = seeded();
    app_exec(&mut f.db, "CREATE VIEW v AS SELECT name AS data FROM items").unwrap();
    let sql = "SELECT data FROM v";
    assert!(app_rows(&mut f.db, sql).unwrap().is_empty());
    assert!(
        rows(&mut f.db, sql, &[]).is_empty(),
        "the stdlib runs it too"
    );
    app_exec(
        &mut f.db,
        "DROP VIEW v; CREATE VIEW v AS SELECT data FROM _hull_sessions",
    )
    .unwrap();
    // SQLite prepares the cached statement again as app code runs it.
    assert_reserved(app_rows(&mut f.db, sql), "re-prepared for the app");
    // The stdlib's run prepares it again with its rights; app code may not
    // then reuse it, though the schema has not changed since.
    assert_eq!(rows(&mut f.db, sql, &[]), [vec![text("secret")]]);
    assert_reserved(app_rows(&mut f.db, sql), "re-prepared for the stdlib");
}

#[test]
fn several_statements_are_each_checked() {
    let mut f = seeded();
    assert_reserved(
        app_exec(
            &mut f.db,
            "INSERT INTO items(name) VALUES ('a'); DELETE FROM _hull_sessions",
        ),
        "second statement",
    );
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM _hull_sessions"), 1);
    denied(
        app_exec(&mut f.db, "SELECT 1; PRAGMA synchronous = OFF"),
        "pragma after a select",
    );
}

#[test]
fn a_refusal_does_not_color_the_next_error() {
    let mut f = seeded();
    denied(app_exec(&mut f.db, "PRAGMA synchronous = 0"), "pragma");
    let err = app_exec(&mut f.db, "SELEC 1").expect_err("syntax");
    assert_eq!(err.code(), "db.sql", "{err}");
    let err = app_exec(&mut f.db, "SELECT 1; SELEC 2").expect_err("syntax, several");
    assert_eq!(err.code(), "db.sql", "{err}");
}

#[test]
fn migrations_may_seed_reserved_tables_but_not_leave_the_database() {
    let mut f = fixture();
    let dir = f.dir.path().join("migrations");
    fs::create_dir(&dir).unwrap();
    fs::write(
        dir.join("001_seed.sql"),
        "CREATE TABLE _hull_sessions(id TEXT);
         INSERT INTO _hull_sessions VALUES ('seed');",
    )
    .unwrap();
    let app = cove_core::AppFiles::Dir(f.dir.path().to_path_buf());
    f.db.migrate(&app)
        .expect("a migration may seed the reserved tables");
    let out = f.dir.path().join("out.db");
    fs::write(
        dir.join("002_copy.sql"),
        format!("ATTACH '{}' AS out;", out.display()),
    )
    .unwrap();
    let err = f.db.migrate(&app).expect_err("attach");
    assert!(
        err.to_string().starts_with("002_copy.sql: access denied"),
        "{err}"
    );
    assert!(!out.exists());
}
