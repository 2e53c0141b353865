//! Reads outside a write group share one snapshot per turn (group.rs).

use super::{exec, fixture, int, Fixture};
use crate::{Db, Origin, WriteLock};
use cove_core::TurnTx;
use std::path::Path;

/// A table with one row, and a grouped connection to read it.
fn reading() -> (Fixture, Db) {
    let mut f = fixture();
    exec(&mut f.db, "CREATE TABLE t(v)");
    add(&mut f.db);
    let mut w = f.second();
    w.set_group_commit(true);
    (f, w)
}

/// A connection as another process has it: its writes move no count here.
fn other_process(f: &Fixture) -> Db {
    Db::open(&f.path, WriteLock::default()).expect("open")
}

fn add(db: &mut Db) {
    exec(db, "INSERT INTO t VALUES (1)");
}

fn count(db: &mut Db) -> i64 {
    int(db, "SELECT count(*) FROM t")
}

#[test]
fn reads_in_one_turn_share_a_snapshot() {
    let (f, mut w) = reading();
    let mut other = other_process(&f);
    assert_eq!(count(&mut w), 1);
    assert_eq!(
        w.turn_tx(),
        TurnTx::Read,
        "the snapshot lasts until the turn ends"
    );
    assert_eq!(w.take_touched(), None, "a read alone is not held back");
    add(&mut other);
    assert_eq!(count(&mut w), 1, "the same snapshot");
    assert!(w.commit_group());
    assert_eq!(w.turn_tx(), TurnTx::None);
    assert_eq!(count(&mut w), 2, "the next turn's");
}

#[test]
fn a_write_this_process_finished_is_seen_at_once() {
    let (mut f, mut w) = reading();
    assert_eq!(count(&mut w), 1);
    add(&mut f.db);
    assert_eq!(count(&mut w), 2, "after an autocommit write");
    let mut grouped = f.second();
    grouped.set_group_commit(true);
    add(&mut grouped);
    assert_eq!(count(&mut w), 2, "not committed yet");
    assert!(grouped.commit_group());
    assert_eq!(count(&mut w), 3, "after a group commit");
}

#[test]
fn a_write_ends_the_snapshot_first() {
    let (f, mut w) = reading();
    let mut other = other_process(&f);
    assert_eq!(count(&mut w), 1);
    add(&mut other);
    // Inside the old snapshot this write would fail with SQLITE_BUSY_SNAPSHOT.
    add(&mut w);
    assert_eq!(w.turn_tx(), TurnTx::Write);
    assert_eq!(count(&mut w), 3, "the group reads the latest");
    assert!(w.take_touched().is_some());
    assert!(w.commit_group());
    assert_eq!(count(&mut other), 3);
}

#[test]
fn batches_and_the_apps_own_transactions_start_after_a_read() {
    let (_f, mut w) = reading();
    count(&mut w);
    w.begin_batch().unwrap();
    add(&mut w);
    w.commit_batch().unwrap();
    assert!(w.commit_group());
    count(&mut w);
    w.exec("BEGIN", &[], Origin::App).unwrap();
    add(&mut w);
    w.exec("COMMIT", &[], Origin::App).unwrap();
    assert_eq!(count(&mut w), 3);
}

#[test]
fn the_stale_guard_leaves_a_read_snapshot_alone() {
    let (_f, mut w) = reading();
    count(&mut w);
    assert!(!w.rollback_stale());
    assert_eq!(w.turn_tx(), TurnTx::Read);
}

#[test]
fn no_snapshot_without_group_commit_or_a_wal_file() {
    let (f, _) = reading();
    let mut plain = f.second();
    count(&mut plain);
    assert!(!plain.in_transaction());
    let mut memory = Db::open(Path::new(":memory:"), WriteLock::default()).unwrap();
    memory.set_group_commit(true);
    int(&mut memory, "SELECT 1");
    assert_eq!(memory.turn_tx(), TurnTx::None);
    assert!(!memory.in_transaction());
}
