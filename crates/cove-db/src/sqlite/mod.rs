//! The embedded backend: one SQLite connection per worker.

mod batch;
pub(crate) mod conn;
mod group;
mod inspect;
pub(crate) mod lock;
mod migrate;
pub(crate) mod stmt;
