//! The embedded backend: one SQLite connection per worker.

mod batch;
pub(crate) mod conn;
mod group;
pub(crate) mod guard;
mod inspect;
pub(crate) mod lock;
mod migrate;
mod open;
mod rules;
pub(crate) mod stmt;
