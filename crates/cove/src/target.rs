//! What `--db` names: a SQLite file (the default, `data.db`) or a
//! PostgreSQL database (`postgres://user:pass@host:port/db`, also taken
//! from `DATABASE_URL`). Every command opens its database through here.

use std::path::Path;

use anyhow::{anyhow, Result};

use cove_db::{Db, WriteLock};

/// The PostgreSQL URL `db` holds, if it is one.
pub(crate) fn postgres_url(db: &Path) -> Option<&str> {
    db.to_str().filter(|s| Db::is_postgres_url(s))
}

/// `db` as it may be shown: a URL without its password.
pub(crate) fn shown(db: &Path) -> String {
    match postgres_url(db) {
        Some(url) => cove_core::redact_url(url),
        None => db.display().to_string(),
    }
}

/// Opens the database for reading and writing: a SQLite file (created if
/// missing; `lock` is shared by every connection of the process), or a
/// connection to PostgreSQL made now.
pub(crate) fn open(db: &Path, lock: &WriteLock) -> Result<Db, String> {
    match postgres_url(db) {
        Some(url) => Db::connect(url).map_err(|e| e.to_string()),
        None if db.to_string_lossy().contains("://") => Err(format!(
            "unsupported database URL {}: give a SQLite file path or a postgres:// URL",
            shown(db)
        )),
        // The error names the file already.
        None => Db::open(db, lock.clone()).map_err(|e| e.to_string()),
    }
}

/// [`open`] for the CLI's own commands.
pub(crate) fn open_cli(db: &Path) -> Result<Db> {
    open(db, &WriteLock::default()).map_err(|e| anyhow!(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            shown(Path::new("postgres://app:s3cret@db.internal:5432/app")),
            "postgres://app@db.internal:5432/app"
        );
        assert_eq!(
            shown(Path::new("postgres://db.internal/app")),
            "postgres://db.internal/app"
        );
        assert_eq!(shown(Path::new("data.db")), "data.db");
        assert!(postgres_url(Path::new("postgresql://x/y")).is_some());
        assert!(postgres_url(Path::new("postgres.db")).is_none());
    }
}
