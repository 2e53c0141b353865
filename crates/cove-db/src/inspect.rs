//! What tools see of a database (`cove db schema`, `cove db query`): tables and
//! columns, and one statement's complete result with its column names. Unlike
//! [`crate::Db::query`] these may read the reserved `_hull_*` tables: the
//! person running a tool owns the database.

use crate::value::Value;

/// One table of [`crate::Db::schema`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    pub name: String,
    /// In declaration order.
    pub columns: Vec<ColumnInfo>,
}

/// One column, as the database describes it (SQLite's `PRAGMA table_info`, PostgreSQL's information_schema).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnInfo {
    pub name: String,
    /// Declared type as written (`INTEGER`, `TEXT`, or empty when none was given).
    pub decl_type: String,
    pub not_null: bool,
    /// The DEFAULT expression as SQL text (`0`, `'x'`, `datetime('now')`).
    pub default: Option<String>,
    /// Part of the primary key.
    pub pk: bool,
}

/// Every row of one statement, with its column names even when it returned none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}
