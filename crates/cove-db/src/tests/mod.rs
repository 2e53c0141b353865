//! Unit tests against real SQLite files in temporary directories.

mod batch;
mod errors;
mod group;
mod guard;
mod locking;
mod migrations;
mod open;
mod query;
mod snapshot;

use crate::{Db, Origin, Value, WriteLock};
use std::path::PathBuf;
use tempfile::TempDir;

/// A fresh database file in its own temp dir, with the lock its `Db` uses.
pub(crate) struct Fixture {
    pub dir: TempDir,
    pub path: PathBuf,
    pub lock: WriteLock,
    pub db: Db,
}

pub(crate) fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("app.db");
    let lock = WriteLock::default();
    let db = Db::open(&path, lock.clone()).expect("open");
    Fixture {
        dir,
        path,
        lock,
        db,
    }
}

impl Fixture {
    /// Another `Db` on the same file, sharing the write lock.
    pub fn second(&self) -> Db {
        Db::open(&self.path, self.lock.clone()).expect("open second")
    }
}

/// All rows of `sql` as owned values (stdlib origin).
pub(crate) fn rows(db: &mut Db, sql: &str, params: &[Value]) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    db.query(sql, params, Origin::Stdlib, |_, row| {
        out.push((0..row.len()).map(|i| Value::from(row.get(i))).collect());
        Ok(())
    })
    .expect("query");
    out
}

/// The single integer `sql` returns.
pub(crate) fn int(db: &mut Db, sql: &str) -> i64 {
    match rows(db, sql, &[]).as_slice() {
        [row] => match row.as_slice() {
            [Value::Integer(i)] => *i,
            other => panic!("{sql}: not one integer: {other:?}"),
        },
        other => panic!("{sql}: not one row: {other:?}"),
    }
}

/// Runs `sql` as stdlib and returns the rows changed.
pub(crate) fn exec(db: &mut Db, sql: &str) -> u64 {
    db.exec(sql, &[], Origin::Stdlib).expect(sql)
}

/// Runs one statement with Cove's own rights (as its tools do): a PRAGMA
/// that app code and the stdlib may not change.
pub(crate) fn as_cove(db: &mut Db, sql: &str) {
    db.query_all(sql).expect(sql);
}

pub(crate) fn text(s: &str) -> Value {
    Value::Text(s.as_bytes().to_vec())
}
