//! The database of Cove apps: SQLite (embedded: per-worker connections, one
//! shared write lock per file, group commit) or PostgreSQL (`--db
//! postgres://…`), behind one [`Db`]; the reserved `_hull_*` namespace and,
//! on SQLite, the authorizer that keeps app SQL to its own tables and out of
//! Cove's settings (sqlite/guard.rs); batches and migrations (Hull API §5).

mod audit;
mod db;
mod error;
mod inspect;
mod metrics;
pub use metrics::count_migrations;
pub use sql_text::mentions_reserved;
mod migrations;
mod pg;
mod shared;
mod sql_text;
mod sqlite;
mod value;

#[cfg(test)]
mod tests;

pub use db::{Db, Origin};
pub use error::DbError;
pub use inspect::{ColumnInfo, ResultSet, TableInfo};
pub use migrations::{Dialect, MigrationReport, MigrationStatus};
pub use shared::SharedDb;
pub use sqlite::lock::WriteLock;
pub use value::{Row, Value, ValueRef};
