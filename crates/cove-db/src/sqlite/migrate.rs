//! Migrations on SQLite (the runner is shared: crate::migrations).

use crate::error::DbError;
use crate::migrations::{
    self, recorded, Dialect, MigrationReport, MigrationStatus, Migrator, RECORD,
};
use crate::sqlite::conn::Sqlite;
use crate::sqlite::guard::Rights;
use crate::sqlite::stmt::from_rusqlite;
use crate::value::{Row, Value};
use crate::Origin;
use cove_core::AppFiles;

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS _hull_migrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    applied_at TEXT NOT NULL DEFAULT (datetime('now')))";
const ENDED_OWN_TRANSACTION: &str =
    "the file ended the migration's transaction itself (COMMIT/ROLLBACK/END); remove that statement";

impl Sqlite {
    pub fn migrate(&mut self, app: &AppFiles) -> Result<MigrationReport, DbError> {
        if self.in_transaction() {
            return Err(DbError::Transaction(
                "cannot run migrations inside a transaction".to_owned(),
            ));
        }
        migrations::migrate(self, app)
    }

    pub fn migration_status(&mut self, app: &AppFiles) -> Result<Vec<MigrationStatus>, DbError> {
        migrations::status(self, app)
    }

    fn apply_in_transaction(&mut self, name: &str, sql: &str) -> Result<bool, DbError> {
        if recorded(self, name)? {
            return Ok(false);
        }
        // A migration is the app's, run at deploy time: the app's rights, and
        // the reserved tables (a migration may seed them; Hull's may too).
        self.guard.begin(Rights::Stdlib);
        if let Err(e) = self.conn.execute_batch(sql) {
            let e = from_rusqlite(&self.conn, e);
            return Err(self.failed(e));
        }
        if !self.in_transaction() {
            return Err(DbError::Transaction(ENDED_OWN_TRANSACTION.to_owned()));
        }
        self.exec(RECORD, &[Value::Text(name.into())], Origin::Stdlib)?;
        Ok(true)
    }
}

impl Migrator for Sqlite {
    const DIALECT: Dialect = Dialect::Sqlite;
    const TABLE_EXISTS: &'static str =
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?";

    fn query_rows<F>(&mut self, sql: &str, params: &[Value], each_row: F) -> Result<(), DbError>
    where
        F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>,
    {
        self.query(sql, params, Origin::Stdlib, each_row)
    }

    fn create_table(&mut self) -> Result<(), DbError> {
        self.exec(CREATE_TABLE, &[], Origin::Stdlib).map(drop)
    }

    fn apply(&mut self, name: &str, sql: &str) -> Result<bool, DbError> {
        self.begin_batch()?;
        let result = self.apply_in_transaction(name, sql);
        match result {
            Ok(true) => self.commit_batch().map(|()| true),
            other => {
                // The migration's own error is the one worth reporting.
                let _ = self.rollback_batch();
                other
            }
        }
    }
}
