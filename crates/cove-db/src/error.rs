//! The one error type of the database capability, with stable codes.

use rusqlite::ErrorCode;

/// Every failure of `cove-db`; `Display` is the bare human message, `code()` the stable code.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Prepare or step failed; the message is SQLite's (e.g. `no such table: todos`).
    #[error("{0}")]
    Sql(String),
    /// A constraint was violated; SQLite's text is kept (e.g. `UNIQUE constraint failed: users.email`).
    #[error("{0}")]
    Constraint(String),
    /// The database stayed locked (by another process) past the busy timeout.
    #[error("{0}")]
    Busy(String),
    /// App code touched the reserved `_hull_*` namespace.
    #[error("access denied: _hull_* tables are reserved")]
    Reserved,
    /// App code tried what the database guard refuses it (another database
    /// file, a PRAGMA Cove sets, an extension, ...); the message says what.
    #[error("{0}")]
    Denied(String),
    /// A batch/transaction was misused (e.g. nested batches).
    #[error("{0}")]
    Transaction(String),
    /// The parameters do not fit the statement.
    #[error("{0}")]
    Params(String),
    /// A migration file failed; `file` is its name, `message` SQLite's (or the I/O) error.
    #[error("{file}: {message}")]
    Migration {
        /// File name of the failing migration, e.g. `001_init.sql`.
        file: String,
        /// What went wrong.
        message: String,
    },
    /// The database file could not be opened or configured.
    #[error("{0}")]
    Open(String),
    /// The row callback of [`crate::Db::query`] failed (e.g. the script VM ran out of memory).
    #[error("{0}")]
    Callback(String),
    /// The database cannot be used for now: the PostgreSQL server cannot be
    /// reached (down or restarting; the connection is made again for the next
    /// request), or SQLite's storage failed (disk full, I/O error). The
    /// request gets 503.
    #[error("{0}")]
    Unavailable(String),
}

impl DbError {
    /// Stable machine-readable code, e.g. `db.sql` or `db.constraint`.
    pub fn code(&self) -> &'static str {
        match self {
            DbError::Sql(_) => "db.sql",
            DbError::Constraint(_) => "db.constraint",
            DbError::Busy(_) => "db.busy",
            DbError::Reserved => "db.reserved",
            DbError::Denied(_) => "db.denied",
            DbError::Transaction(_) => "db.transaction",
            DbError::Params(_) => "db.params",
            DbError::Migration { .. } => "db.migration",
            DbError::Open(_) => "db.open",
            DbError::Callback(_) => "db.callback",
            DbError::Unavailable(_) => "db.unavailable",
        }
    }

    /// As scripts see it: `<call>: <why>` (`db.query failed: no such
    /// table: t`), with its code.
    pub fn cap(&self, call: &str) -> cove_core::CapError {
        cove_core::CapError::new(self.code(), format!("{call}: {self}"))
    }

    /// Same kind of error with `prefix` put before its message (used for `COMMIT failed: ...`).
    pub(crate) fn prefixed(self, prefix: &str) -> DbError {
        match self {
            DbError::Sql(m) => DbError::Sql(format!("{prefix}{m}")),
            DbError::Constraint(m) => DbError::Constraint(format!("{prefix}{m}")),
            DbError::Busy(m) => DbError::Busy(format!("{prefix}{m}")),
            DbError::Transaction(m) => DbError::Transaction(format!("{prefix}{m}")),
            DbError::Params(m) => DbError::Params(format!("{prefix}{m}")),
            DbError::Open(m) => DbError::Open(format!("{prefix}{m}")),
            DbError::Callback(m) => DbError::Callback(format!("{prefix}{m}")),
            DbError::Unavailable(m) => DbError::Unavailable(format!("{prefix}{m}")),
            other @ (DbError::Reserved | DbError::Denied(_) | DbError::Migration { .. }) => other,
        }
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(err: rusqlite::Error) -> DbError {
        let (code, message) = match err {
            rusqlite::Error::SqliteFailure(e, msg) => {
                (Some(e.code), msg.unwrap_or_else(|| e.to_string()))
            }
            rusqlite::Error::SqlInputError { error, msg, .. } => (Some(error.code), msg),
            other => (None, other.to_string()),
        };
        match code {
            Some(ErrorCode::ConstraintViolation) => DbError::Constraint(message),
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => DbError::Busy(message),
            Some(ErrorCode::DiskFull | ErrorCode::SystemIoFailure | ErrorCode::CannotOpen) => {
                DbError::Unavailable(message)
            }
            _ => DbError::Sql(message),
        }
    }
}

/// Message for a call that passes more parameters than the statement has placeholders.
pub(crate) fn too_many_params(want: usize, got: usize) -> String {
    format!("too many parameters: the statement takes {want}, got {got}")
}
