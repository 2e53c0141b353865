//! SQLite for Cove apps: per-worker connections, one shared write lock per file,
//! the reserved `_hull_*` namespace, batches and migrations (Hull API §5).

mod batch;
mod conn;
mod error;
mod group;
mod inspect;
mod lock;
mod migrate;
mod sql_text;
mod stmt;
mod value;

#[cfg(test)]
mod tests;

pub use conn::{Db, Origin};
pub use error::DbError;
pub use inspect::{ColumnInfo, ResultSet, TableInfo};
pub use lock::WriteLock;
pub use migrate::{MigrationReport, MigrationStatus};
pub use value::{Row, Value, ValueRef};
