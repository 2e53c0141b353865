use super::*;
use crate::sqlite::conn::STATEMENT_CACHE_CAPACITY;
use crate::DbError;

fn pragma_text(db: &mut Db, name: &str) -> String {
    match rows(db, &format!("PRAGMA {name}"), &[]).as_slice() {
        [row] => match row.as_slice() {
            [Value::Text(t)] => String::from_utf8_lossy(t).into_owned(),
            [Value::Integer(i)] => i.to_string(),
            other => panic!("{name}: {other:?}"),
        },
        other => panic!("{name}: {other:?}"),
    }
}

fn assert_pragmas(db: &mut Db, journal: &str, on_disk: bool) {
    assert_eq!(pragma_text(db, "journal_mode"), journal);
    assert_eq!(pragma_text(db, "synchronous"), "1"); // NORMAL
    assert_eq!(pragma_text(db, "foreign_keys"), "1");
    assert_eq!(pragma_text(db, "busy_timeout"), "5000");
    assert_eq!(pragma_text(db, "cache_size"), "-16384");
    assert_eq!(pragma_text(db, "temp_store"), "2"); // MEMORY
    if on_disk {
        assert_eq!(pragma_text(db, "mmap_size"), "268435456");
    } else {
        // An in-memory database has nothing to map: SQLite answers with no row.
        assert!(rows(db, "PRAGMA mmap_size", &[]).is_empty());
    }
    assert_eq!(pragma_text(db, "wal_autocheckpoint"), "1000");
}

#[test]
fn pragmas_are_applied_to_file_databases() {
    let mut f = fixture();
    assert_pragmas(&mut f.db, "wal", true);
}

#[test]
fn pragmas_are_applied_to_memory_databases() {
    let mut db = Db::open(Path::new(":memory:"), WriteLock::default()).expect("open");
    assert_pragmas(&mut db, "memory", false); // SQLite keeps in-memory databases in "memory" mode
}

#[test]
fn open_fails_with_db_open_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("missing-dir").join("app.db");
    let err = Db::open(&path, WriteLock::default()).expect_err("must fail");
    assert_eq!(err.code(), "db.open");
    assert!(err.to_string().contains("missing-dir"), "{err}");
}

#[test]
fn open_readonly_reads_but_refuses_writes() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(x); INSERT INTO t VALUES (1)");
    let mut ro = Db::open_readonly(&f.path).expect("open readonly");
    assert_eq!(int(&mut ro, "SELECT count(*) FROM t"), 1);
    let err = ro
        .exec("INSERT INTO t VALUES (2)", &[], Origin::App)
        .expect_err("must fail");
    assert!(err.to_string().contains("readonly"), "{err}");
    assert!(matches!(
        Db::open_readonly(&f.dir.path().join("nope.db")),
        Err(DbError::Open(_))
    ));
}

#[test]
fn db_is_send_and_works_on_another_thread() {
    fn assert_send<T: Send>(_: &T) {}
    let f = fixture();
    let mut db = f.second();
    assert_send(&db);
    let n = std::thread::spawn(move || int(&mut db, "SELECT 41 + 1"))
        .join()
        .expect("join");
    assert_eq!(n, 42);
}

#[test]
fn cached_statements_get_fresh_bindings() {
    let mut f = fixture();
    let sql = "SELECT ?, ?";
    assert_eq!(
        rows(&mut f.db, sql, &[Value::Integer(1), Value::Integer(2)]),
        vec![vec![Value::Integer(1), Value::Integer(2)]]
    );
    // Same cached statement, one parameter: the second must be NULL, not the stale 2.
    assert_eq!(
        rows(&mut f.db, sql, &[Value::Integer(3)]),
        vec![vec![Value::Integer(3), Value::Null]]
    );
}

#[test]
fn statement_cache_evicts_and_reprepares_past_capacity() {
    let mut f = fixture();
    for i in 0..(STATEMENT_CACHE_CAPACITY as i64 + 20) {
        assert_eq!(int(&mut f.db, &format!("SELECT {i}")), i);
    }
    assert_eq!(int(&mut f.db, "SELECT 0"), 0);
    assert_eq!(STATEMENT_CACHE_CAPACITY, 128);
}

use std::path::Path;

fn open_err(path: &Path) -> String {
    let err = Db::open(path, WriteLock::default()).expect_err("must fail");
    assert_eq!(err.code(), "db.open");
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!("cannot open database {}: ", path.display())),
        "{msg}"
    );
    msg
}

#[test]
fn a_path_that_cannot_hold_a_database_says_why() {
    let dir = tempfile::tempdir().expect("temp dir");
    let msg = open_err(dir.path());
    assert!(
        msg.contains("it is a directory; name a file in it"),
        "{msg}"
    );
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let msg = open_err(&file.join("app.db"));
    assert!(msg.contains("plain is not a directory"), "{msg}");
}

#[test]
fn a_damaged_file_is_refused_at_open_naming_the_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let garbage = dir.path().join("garbage.db");
    std::fs::write(&garbage, vec![0xA5u8; 8192]).unwrap();
    let msg = open_err(&garbage);
    assert!(msg.contains("file is not a database"), "{msg}");
    assert!(msg.contains("restore it from a backup"), "{msg}");

    // A valid header over a damaged schema page fails at open too.
    let broken = dir.path().join("broken.db");
    {
        let c = rusqlite::Connection::open(&broken).unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1)")
            .unwrap();
    }
    let mut bytes = std::fs::read(&broken).unwrap();
    bytes[100..4096].fill(0x5A);
    std::fs::write(&broken, bytes).unwrap();
    let msg = open_err(&broken);
    assert!(msg.contains("malformed"), "{msg}");
    assert!(msg.contains("restore it from a backup"), "{msg}");
}
