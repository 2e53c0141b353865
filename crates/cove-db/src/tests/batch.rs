use super::*;

fn table(f: &mut Fixture) {
    exec(&mut f.db, "CREATE TABLE t(x)");
}

#[test]
fn a_committed_batch_persists_and_a_rolled_back_one_does_not() {
    let mut f = fixture();
    table(&mut f);
    f.db.begin_batch().expect("begin");
    assert!(f.db.in_transaction());
    exec(&mut f.db, "INSERT INTO t VALUES (1)");
    f.db.commit_batch().expect("commit");
    assert!(!f.db.in_transaction());
    f.db.begin_batch().expect("begin");
    exec(&mut f.db, "INSERT INTO t VALUES (2)");
    f.db.rollback_batch().expect("rollback");
    assert!(!f.db.in_transaction());
    assert!(!f.db.holds_write_lock());
    assert_eq!(
        rows(&mut f.db, "SELECT x FROM t", &[]),
        vec![vec![Value::Integer(1)]]
    );
    let mut other = f.second();
    assert_eq!(int(&mut other, "SELECT count(*) FROM t"), 1);
}

#[test]
fn a_nested_batch_is_refused_and_the_outer_one_survives() {
    let mut f = fixture();
    table(&mut f);
    f.db.begin_batch().expect("begin");
    exec(&mut f.db, "INSERT INTO t VALUES (1)");
    let err = f.db.begin_batch().expect_err("nested");
    assert_eq!(err.code(), "db.transaction");
    assert_eq!(
        err.to_string(),
        "cannot start a transaction within a transaction"
    );
    assert!(f.db.in_transaction());
    assert!(f.db.holds_write_lock());
    f.db.commit_batch().expect("commit");
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 1);
}

#[test]
fn a_failed_commit_rolls_back_releases_and_says_commit_failed() {
    let mut f = fixture();
    exec(
        &mut f.db,
        "CREATE TABLE parent(id INTEGER PRIMARY KEY);
         CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)",
    );
    f.db.begin_batch().expect("begin");
    exec(&mut f.db, "INSERT INTO child VALUES (99)"); // checked only at COMMIT
    let err = f.db.commit_batch().expect_err("commit must fail");
    assert_eq!(
        err.to_string(),
        "COMMIT failed: FOREIGN KEY constraint failed"
    );
    assert_eq!(err.code(), "db.constraint");
    assert!(!f.db.in_transaction());
    assert!(!f.db.holds_write_lock());
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM child"), 0);
}

#[test]
fn rollback_stale_closes_what_a_request_left_open() {
    let mut f = fixture();
    table(&mut f);
    assert!(!f.db.rollback_stale());
    exec(&mut f.db, "BEGIN"); // app code that never commits
    exec(&mut f.db, "INSERT INTO t VALUES (1)");
    assert!(f.db.rollback_stale());
    assert!(!f.db.in_transaction());
    assert!(!f.db.holds_write_lock());
    f.db.begin_batch().expect("begin"); // a handler that errored mid-batch
    exec(&mut f.db, "INSERT INTO t VALUES (2)");
    assert!(f.db.rollback_stale());
    assert!(!f.db.holds_write_lock());
    assert!(!f.db.rollback_stale());
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 0);
}

#[test]
fn optimize_and_checkpoint_truncates_the_wal() {
    let mut f = fixture();
    table(&mut f);
    exec(&mut f.db, "INSERT INTO t VALUES (1), (2)");
    let wal = f.dir.path().join("app.db-wal");
    let len = || std::fs::metadata(&wal).map(|m| m.len()).expect("wal file");
    assert!(len() > 0);
    f.db.optimize_and_checkpoint().expect("checkpoint");
    assert_eq!(len(), 0);
    assert!(!f.db.holds_write_lock());
}
