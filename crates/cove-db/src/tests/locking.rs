//! The shared write lock: workers queue on it instead of spinning in SQLite's busy handler.
//! Worker connections use `busy_timeout = 0`, so any write that reached SQLite while another
//! worker held its write transaction would fail at once with SQLITE_BUSY.

use super::*;
use crate::DbError;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(20);

/// Runs `f` on a fresh thread and fails the test (instead of hanging) if it blocks.
fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(LIMIT).expect("blocked on the write lock")
}

/// Waits until some other thread is parked in `WriteLock::acquire`.
fn wait_for_waiter(lock: &WriteLock) {
    let start = Instant::now();
    while lock.waiters() == 0 {
        assert!(
            start.elapsed() < LIMIT,
            "no writer ever waited for the lock"
        );
        thread::sleep(Duration::from_millis(1));
    }
}

fn worker(f: &Fixture) -> Db {
    let mut db = f.second();
    as_cove(&mut db, "PRAGMA busy_timeout = 0");
    db
}

fn insert(db: &mut Db, who: &str) -> Result<u64, DbError> {
    db.exec("INSERT INTO t(who) VALUES (?)", &[text(who)], Origin::App)
}

fn log_table(f: &mut Fixture) {
    exec(
        &mut f.db,
        "CREATE TABLE t(id INTEGER PRIMARY KEY, who TEXT)",
    );
}

/// One worker's share of the interleaving test: single inserts, batches and the app's own
/// deferred BEGIN (read first, then write) in turn.
fn write_1000(db: &mut Db, who: &str) -> Result<(), DbError> {
    let mut done = 0;
    while done < 1000 {
        match (done / 10) % 3 {
            0 => {
                db.begin_batch()?;
                for _ in 0..10 {
                    insert(db, who)?;
                }
                db.commit_batch()?;
            }
            1 => {
                db.exec("BEGIN", &[], Origin::App)?;
                db.query("SELECT count(*) FROM t", &[], Origin::App, |_, _| Ok(()))?;
                for _ in 0..10 {
                    insert(db, who)?;
                }
                db.exec("COMMIT", &[], Origin::App)?;
            }
            _ => {
                for _ in 0..10 {
                    insert(db, who)?;
                }
            }
        }
        done += 10;
    }
    Ok(())
}

#[test]
fn interleaved_writers_on_one_file_never_hit_busy() {
    let mut f = fixture();
    log_table(&mut f);
    let threads: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|who| {
            let mut db = worker(&f);
            thread::spawn(move || write_1000(&mut db, who))
        })
        .collect();
    for t in threads {
        t.join().expect("join").expect("no write may fail");
    }
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 2000);
    assert_eq!(
        int(&mut f.db, "SELECT count(*) FROM t WHERE who = 'a'"),
        1000
    );
}

#[test]
fn a_batch_blocks_another_writer_until_commit() {
    let mut f = fixture();
    log_table(&mut f);
    let mut other = worker(&f);
    f.db.begin_batch().expect("begin");
    assert!(f.db.holds_write_lock());
    insert(&mut f.db, "a1").expect("a1");
    let (done_tx, done_rx) = mpsc::channel();
    let b = thread::spawn(move || {
        let result = insert(&mut other, "b");
        let _ = done_tx.send(());
        result
    });
    wait_for_waiter(&f.lock); // b is parked on our lock, not polling SQLite
    assert!(
        done_rx.try_recv().is_err(),
        "b wrote while a's batch was open"
    );
    insert(&mut f.db, "a2").expect("a2");
    f.db.commit_batch().expect("commit");
    assert!(!f.db.holds_write_lock());
    assert_eq!(b.join().expect("join").expect("b"), 1);
    let order = rows(&mut f.db, "SELECT who FROM t ORDER BY id", &[]);
    assert_eq!(
        order,
        vec![vec![text("a1")], vec![text("a2")], vec![text("b")]]
    );
}

#[test]
fn an_apps_own_transaction_holds_the_lock_from_begin_to_commit() {
    let mut f = fixture();
    log_table(&mut f);
    for (begin, end) in [
        ("BEGIN", "COMMIT"),
        ("BEGIN IMMEDIATE", "END"),
        ("SAVEPOINT s", "RELEASE s"),
    ] {
        exec(&mut f.db, begin);
        assert!(f.db.holds_write_lock(), "{begin}");
        insert(&mut f.db, begin).expect("insert");
        let mut other = worker(&f);
        let (done_tx, done_rx) = mpsc::channel();
        let b = thread::spawn(move || {
            let result = insert(&mut other, "other");
            let _ = done_tx.send(());
            result
        });
        wait_for_waiter(&f.lock);
        assert!(done_rx.try_recv().is_err(), "other wrote inside {begin}");
        exec(&mut f.db, end);
        assert!(!f.db.holds_write_lock(), "{end}");
        b.join().expect("join").expect("other");
    }
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 6);
}

#[test]
fn readers_do_not_wait_for_the_lock() {
    let mut f = fixture();
    log_table(&mut f);
    insert(&mut f.db, "x").expect("insert");
    let mut reader = worker(&f);
    f.db.begin_batch().expect("begin");
    insert(&mut f.db, "uncommitted").expect("insert");
    let (n, reader) = within(move || (int(&mut reader, "SELECT count(*) FROM t"), reader));
    assert_eq!(n, 1); // WAL: the reader sees the last commit
    assert!(!reader.holds_write_lock());
    f.db.commit_batch().expect("commit");
}

#[test]
fn a_failed_write_releases_the_lock() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE u(email TEXT UNIQUE)");
    exec(&mut f.db, "INSERT INTO u VALUES ('a@x')");
    let err =
        f.db.exec("INSERT INTO u VALUES ('a@x')", &[], Origin::App)
            .expect_err("dup");
    assert_eq!(err.code(), "db.constraint");
    assert!(!f.db.holds_write_lock());
    let mut other = f.second();
    within(move || exec(&mut other, "INSERT INTO u VALUES ('b@x')"));
}

#[test]
fn a_failed_write_inside_a_batch_keeps_the_batch_and_lock() {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE u(email TEXT UNIQUE)");
    f.db.begin_batch().expect("begin");
    exec(&mut f.db, "INSERT INTO u VALUES ('a@x')");
    assert!(f
        .db
        .exec("INSERT INTO u VALUES ('a@x')", &[], Origin::App)
        .is_err());
    assert!(f.db.in_transaction());
    assert!(f.db.holds_write_lock());
    f.db.commit_batch().expect("commit");
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM u"), 1);
}

#[test]
fn an_aborted_insert_returning_releases_the_lock() {
    let mut f = fixture();
    log_table(&mut f);
    let err = f.db.query(
        "INSERT INTO t(who) VALUES ('r') RETURNING id",
        &[],
        Origin::App,
        |_, _| Err(DbError::Callback("vm out of memory".into())),
    );
    assert!(err.is_err());
    assert!(!f.db.holds_write_lock());
    assert!(!f.db.in_transaction());
    let mut other = f.second();
    within(move || exec(&mut other, "INSERT INTO t(who) VALUES ('other')"));
}

#[test]
fn dropping_a_db_mid_batch_rolls_back_and_releases() {
    let mut f = fixture();
    log_table(&mut f);
    let mut a = f.second();
    a.begin_batch().expect("begin");
    insert(&mut a, "lost").expect("insert");
    drop(a);
    let mut other = f.second();
    within(move || exec(&mut other, "INSERT INTO t(who) VALUES ('kept')"));
    assert_eq!(
        rows(&mut f.db, "SELECT who FROM t", &[]),
        vec![vec![text("kept")]]
    );
}
