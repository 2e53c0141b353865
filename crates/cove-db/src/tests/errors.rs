use super::*;
use crate::DbError;

fn exec_err(db: &mut Db, sql: &str) -> DbError {
    db.exec(sql, &[], Origin::App).expect_err(sql)
}

#[test]
fn sql_errors_carry_sqlites_message_only() {
    let mut f = fixture();
    let err = exec_err(&mut f.db, "SELECT * FROM todos");
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        ("db.sql", "no such table: todos")
    );
    let err = exec_err(&mut f.db, "SELEC 1");
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        ("db.sql", "near \"SELEC\": syntax error")
    );
    let err =
        f.db.query("SELECT nope", &[], Origin::App, |_, _| Ok(()))
            .expect_err("fail");
    assert_eq!(err.to_string(), "no such column: nope");
}

#[test]
fn constraint_errors_keep_sqlites_text() {
    let mut f = fixture();
    exec(
        &mut f.db,
        "CREATE TABLE users(email TEXT UNIQUE, name TEXT NOT NULL)",
    );
    exec(&mut f.db, "INSERT INTO users VALUES ('a@x', 'a')");
    let err = exec_err(&mut f.db, "INSERT INTO users VALUES ('a@x', 'b')");
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        ("db.constraint", "UNIQUE constraint failed: users.email")
    );
    let err = exec_err(&mut f.db, "INSERT INTO users VALUES ('b@x', NULL)");
    assert_eq!(err.to_string(), "NOT NULL constraint failed: users.name");
}

#[test]
fn a_writer_outside_this_process_lock_yields_db_busy() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(x)");
    as_cove(&mut f.db, "PRAGMA busy_timeout = 0");
    // A connection that does not share the WriteLock, like another process.
    let outsider = rusqlite::Connection::open(&f.path).expect("open");
    outsider
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
        .expect("outsider");
    let err = exec_err(&mut f.db, "INSERT INTO t VALUES (2)");
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        ("db.busy", "database is locked")
    );
    assert!(!f.db.holds_write_lock());
    outsider.execute_batch("COMMIT").expect("commit");
    assert_eq!(exec(&mut f.db, "INSERT INTO t VALUES (2)"), 1);
}

#[test]
fn every_variant_has_its_stable_code() {
    let all = [
        (DbError::Sql("m".into()), "db.sql"),
        (DbError::Constraint("m".into()), "db.constraint"),
        (DbError::Busy("m".into()), "db.busy"),
        (DbError::Reserved, "db.reserved"),
        (DbError::Denied("m".into()), "db.denied"),
        (DbError::Transaction("m".into()), "db.transaction"),
        (DbError::Params("m".into()), "db.params"),
        (
            DbError::Migration {
                file: "f.sql".into(),
                message: "m".into(),
            },
            "db.migration",
        ),
        (DbError::Open("m".into()), "db.open"),
        (DbError::Callback("m".into()), "db.callback"),
        (DbError::Unavailable("m".into()), "db.unavailable"),
    ];
    for (err, code) in all {
        assert_eq!(err.code(), code);
        let want = match err {
            DbError::Reserved => "access denied: _hull_* tables are reserved",
            DbError::Migration { .. } => "f.sql: m",
            _ => "m",
        };
        assert_eq!(err.to_string(), want);
    }
}

#[test]
fn a_full_database_is_a_storage_fault_not_an_sql_error() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(x)");
    let pages = int(&mut f.db, "PRAGMA page_count");
    as_cove(&mut f.db, &format!("PRAGMA max_page_count = {}", pages + 2));
    let err = exec_err(&mut f.db, "INSERT INTO t VALUES (randomblob(100000))");
    assert_eq!(
        (err.code(), err.to_string().as_str()),
        ("db.unavailable", "database or disk is full")
    );
    // Reads go on.
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 0);
}
