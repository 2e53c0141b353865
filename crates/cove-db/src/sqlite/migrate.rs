//! Forward-only SQL migrations from a directory, tracked in `_hull_migrations` (Hull API §5.4).

use crate::error::DbError;
use crate::migrations::{failed, files, text, Dialect, MigrationReport, MigrationStatus, DIR};
use crate::sql_text;
use crate::sqlite::conn::Sqlite;
use crate::value::Value;
use crate::Origin;
use cove_core::AppFiles;
use std::collections::HashMap;

const TABLE: &str = "_hull_migrations";
const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS _hull_migrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    applied_at TEXT NOT NULL DEFAULT (datetime('now')))";
const ENDED_OWN_TRANSACTION: &str =
    "the file ended the migration's transaction itself (COMMIT/ROLLBACK/END); remove that statement";

impl Sqlite {
    /// Applies, in file-name order, every `migrations/*.sql` file of the app not yet
    /// recorded, each in its own transaction; stops at the first failure. No `migrations/`
    /// directory applies nothing.
    pub fn migrate(&mut self, app: &AppFiles) -> Result<MigrationReport, DbError> {
        if self.in_transaction() {
            return Err(DbError::Transaction(
                "cannot run migrations inside a transaction".to_owned(),
            ));
        }
        self.exec(CREATE_TABLE, &[], Origin::Stdlib)
            .map_err(|e| failed(TABLE, e))?;
        let applied = self.applied().map_err(|e| failed(TABLE, e))?;
        let mut report = MigrationReport::default();
        for file in files(app, Dialect::Sqlite)? {
            let name = file.name;
            if applied.contains_key(&name) {
                continue;
            }
            let sql = app
                .read(&format!("{DIR}/{}", file.file))
                .map_err(|e| failed(&name, e))?;
            let sql = std::str::from_utf8(&sql).map_err(|_| failed(&name, "not UTF-8"))?;
            if sql_text::is_blank(sql) {
                report.skipped_empty.push(name);
            } else if self.apply(&name, sql).map_err(|e| failed(&name, e))? {
                report.applied.push(name);
            }
        }
        Ok(report)
    }

    /// Every `migrations/*.sql` file of the app in apply order, with its `applied_at` if it
    /// was applied.
    pub fn migration_status(&mut self, app: &AppFiles) -> Result<Vec<MigrationStatus>, DbError> {
        let files = files(app, Dialect::Sqlite)?;
        let mut exists = false;
        self.query(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
            &[Value::Text(TABLE.into())],
            Origin::Stdlib,
            |_, _| {
                exists = true;
                Ok(())
            },
        )?;
        let applied = if exists {
            self.applied()?
        } else {
            HashMap::new()
        };
        Ok(files
            .into_iter()
            .map(|f| MigrationStatus {
                applied_at: applied.get(&f.name).cloned(),
                name: f.name,
            })
            .collect())
    }

    /// Runs one migration file in a transaction and records it. Returns false if another
    /// process recorded it first.
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

    fn apply_in_transaction(&mut self, name: &str, sql: &str) -> Result<bool, DbError> {
        let name_param = [Value::Text(name.into())];
        let mut taken = false;
        self.query(
            "SELECT 1 FROM _hull_migrations WHERE name = ?",
            &name_param,
            Origin::Stdlib,
            |_, _| {
                taken = true;
                Ok(())
            },
        )?;
        if taken {
            return Ok(false);
        }
        self.conn.execute_batch(sql)?;
        if !self.in_transaction() {
            return Err(DbError::Transaction(ENDED_OWN_TRANSACTION.to_owned()));
        }
        self.exec(
            "INSERT INTO _hull_migrations (name) VALUES (?)",
            &name_param,
            Origin::Stdlib,
        )?;
        Ok(true)
    }

    /// name -> applied_at for every recorded migration.
    fn applied(&mut self) -> Result<HashMap<String, String>, DbError> {
        let mut map = HashMap::new();
        self.query(
            "SELECT name, applied_at FROM _hull_migrations",
            &[],
            Origin::Stdlib,
            |_, row| {
                map.insert(text(row.get(0)), text(row.get(1)));
                Ok(())
            },
        )?;
        Ok(map)
    }
}
