//! Group commit: one transaction per event-loop turn, results per group.

use super::{fixture, int, Fixture};
use crate::{Db, Origin, Value};

fn grouped() -> (Fixture, Db) {
    let mut f = fixture();
    f.db.exec(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT UNIQUE)",
        &[],
        Origin::App,
    )
    .unwrap();
    let mut w = f.second();
    w.set_group_commit(true);
    (f, w)
}

fn insert(db: &mut Db, v: &str) -> Result<u64, crate::DbError> {
    db.exec(
        "INSERT INTO t(v) VALUES (?)",
        &[Value::Text(v.into())],
        Origin::App,
    )
}

#[test]
fn writes_of_a_group_become_visible_at_commit() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    insert(&mut w, "b").unwrap();
    let gen = w.take_touched().expect("joined a group");
    assert!(w.group_open());
    assert_eq!(w.group_result(gen), None);
    assert_eq!(
        int(&mut f.db, "SELECT count(*) FROM t"),
        0,
        "not committed yet"
    );
    assert!(w.commit_group());
    assert_eq!(w.group_result(gen), Some(true));
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 2);
    assert!(!w.group_open());
}

#[test]
fn reads_during_an_open_group_join_it_and_reads_alone_do_not() {
    let (_f, mut w) = grouped();
    int(&mut w, "SELECT count(*) FROM t");
    assert_eq!(w.take_touched(), None);
    insert(&mut w, "a").unwrap();
    w.take_touched();
    int(&mut w, "SELECT count(*) FROM t");
    assert!(
        w.take_touched().is_some(),
        "a read of uncommitted data waits too"
    );
}

#[test]
fn a_failed_statement_keeps_the_rest_of_the_group() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    assert!(insert(&mut w, "a").is_err(), "unique violation");
    insert(&mut w, "b").unwrap();
    let gen = w.take_touched().unwrap();
    assert!(w.commit_group());
    assert_eq!(w.group_result(gen), Some(true));
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 2);
}

#[test]
fn an_error_that_rolls_back_the_transaction_fails_the_group() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    let gen = w.take_touched().unwrap();
    let e = w.exec(
        "INSERT OR ROLLBACK INTO t(v) VALUES ('a')",
        &[],
        Origin::App,
    );
    assert!(e.is_err());
    assert_eq!(w.group_result(gen), Some(false));
    assert!(!w.group_open());
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 0);
    // The next write starts a new group and the lock was released.
    insert(&mut f.db, "x").unwrap();
}

#[test]
fn batches_are_savepoints_inside_the_group() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    w.begin_batch().unwrap();
    insert(&mut w, "b").unwrap();
    assert!(w.begin_batch().is_err(), "nested batch");
    w.rollback_batch().unwrap();
    w.begin_batch().unwrap();
    insert(&mut w, "c").unwrap();
    w.commit_batch().unwrap();
    assert!(w.commit_group());
    let vals = super::rows(&mut f.db, "SELECT v FROM t ORDER BY v", &[]);
    assert_eq!(
        vals,
        vec![
            vec![Value::Text(b"a".to_vec())],
            vec![Value::Text(b"c".to_vec())]
        ]
    );
}

#[test]
fn an_apps_own_begin_commits_the_group_first() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    let gen = w.take_touched().unwrap();
    w.exec("BEGIN", &[], Origin::App).unwrap();
    assert_eq!(w.group_result(gen), Some(true));
    insert(&mut w, "b").unwrap();
    w.exec("COMMIT", &[], Origin::App).unwrap();
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 2);
}

#[test]
fn the_stale_guard_leaves_an_open_group_alone() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    assert!(!w.rollback_stale());
    assert!(w.commit_group());
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 1);
}

#[test]
fn dropping_a_connection_commits_its_open_group() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    drop(w);
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 1);
}

#[test]
fn another_writer_waits_for_the_group() {
    let (f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    let path = f.path.clone();
    let lock = f.lock.clone();
    let other = std::thread::spawn(move || {
        let mut o = Db::open(&path, lock).unwrap();
        insert(&mut o, "b").unwrap();
    });
    while f.lock.waiters() == 0 {
        std::thread::yield_now();
    }
    assert!(!other.is_finished());
    assert!(w.commit_group());
    other.join().unwrap();
}

#[test]
fn a_commit_that_fails_fails_its_group_and_is_counted() {
    let (mut f, mut w) = grouped();
    f.db.exec(
        "CREATE TABLE p(id INTEGER PRIMARY KEY);
         CREATE TABLE c(pid REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)",
        &[],
        Origin::App,
    )
    .unwrap();
    // A deferred foreign key is checked at COMMIT: the group's commit fails.
    w.exec("INSERT INTO c VALUES (5)", &[], Origin::App)
        .unwrap();
    insert(&mut w, "a").unwrap();
    let gen = w.take_touched().unwrap();
    assert_eq!(f.lock.commit_failures(), 0);
    assert!(!w.commit_group());
    assert_eq!(w.group_result(gen), Some(false));
    assert_eq!(f.lock.commit_failures(), 1);
    assert_eq!(
        int(&mut f.db, "SELECT count(*) FROM t"),
        0,
        "nothing half-kept"
    );
    // A group rolled back by a failing statement counts too.
    insert(&mut w, "b").unwrap();
    assert!(w
        .exec(
            "INSERT OR ROLLBACK INTO t(v) VALUES ('b')",
            &[],
            Origin::App
        )
        .is_err());
    assert_eq!(f.lock.commit_failures(), 2);
    insert(&mut w, "c").unwrap();
    assert!(w.commit_group());
    assert_eq!(f.lock.commit_failures(), 2);
}

/// What an engine and the server do with a worker's connection: the engine
/// notes the call's group in the request's `TurnUse`, the server ends the
/// turn through `DbTurn` and learns the group's result.
#[test]
fn a_call_notes_its_group_and_the_turn_commits_it() {
    use cove_core::{DbTurn, TurnTx, TurnUse};
    let (mut f, w) = grouped();
    let shared = crate::SharedDb::new(w);
    let mut turn = TurnUse::default();
    insert(&mut shared.borrow_mut(), "a").unwrap();
    shared.borrow_mut().finish_call(&mut turn);
    let gen = turn.touched.expect("joined a group");
    assert!(turn.left_open);
    assert_eq!(shared.turn_tx(), TurnTx::Write);
    assert_eq!(shared.group_result(gen), None);
    // A later call that runs nothing keeps the request's group.
    shared.borrow_mut().finish_call(&mut turn);
    assert_eq!(turn.touched, Some(gen));
    assert!(shared.commit_group());
    assert_eq!(shared.group_result(gen), Some(true));
    assert_eq!(shared.turn_tx(), TurnTx::None);
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 1);
    shared.borrow_mut().finish_call(&mut turn);
    assert!(!turn.left_open);
    assert_eq!(turn.touched, Some(gen));
}

#[test]
fn a_pause_commits_the_open_group_and_a_resume_restores_group_commit() {
    let (mut f, mut w) = grouped();
    insert(&mut w, "a").unwrap();
    let gen = w.take_touched().expect("joined a group");
    w.pause_group_commit(true);
    // The group is committed and the write lock released: another
    // connection of the same lock (a second VM on this thread) can write.
    assert_eq!(w.group_result(gen), Some(true));
    assert!(!w.group_open());
    insert(&mut f.db, "b").unwrap();
    // Paused: each write commits on its own, nothing left open.
    insert(&mut w, "c").unwrap();
    assert!(!w.group_open());
    assert_eq!(int(&mut f.db, "SELECT count(*) FROM t"), 3);
    // A second pause changes nothing; the resume brings groups back.
    w.pause_group_commit(true);
    w.pause_group_commit(false);
    insert(&mut w, "d").unwrap();
    assert!(w.group_open());
    assert!(w.commit_group());
}

#[test]
fn a_resume_keeps_group_commit_off_where_it_was_off() {
    let mut f = fixture();
    f.db.exec(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)",
        &[],
        Origin::App,
    )
    .unwrap();
    let mut w = f.second();
    w.pause_group_commit(true);
    w.pause_group_commit(false);
    insert(&mut w, "a").unwrap();
    assert!(!w.group_open());
}
