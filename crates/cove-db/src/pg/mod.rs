//! The PostgreSQL backend (`--db postgres://…`): the same `db` API as SQLite
//! over tokio-postgres. Hull's `?` placeholders become `$n` (sql.rs), values
//! map both ways by the column's type (types.rs), and every statement
//! commits on its own unless a `db.batch` holds a transaction open.
//!
//! Scripts that can suspend await their queries ([`Pg::query_later`]), so
//! the worker serves other requests meanwhile; the rest (inside a batch,
//! while the app loads, tools) block on them.

mod errors;
mod inspect;
mod link;
mod migrate;
mod sql;
mod types;

use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use cove_core::block_on;

use crate::error::DbError;
use crate::inspect::ResultSet;
use crate::sql_text;
use crate::value::{Row, Value};
use crate::Origin;
use link::Link;

const NESTED: &str = "cannot start a transaction within a transaction";

/// One worker's PostgreSQL connection and its script-visible state.
#[derive(Debug)]
pub(crate) struct Pg {
    link: Link,
    /// Set when an INSERT's answer arrives — on the worker, right before the
    /// script that waited for it resumes — so its `db.last_id()` reads it.
    last_id: Arc<AtomicI64>,
    /// A `db.batch` transaction is open.
    in_batch: bool,
    /// A statement failed inside the open batch: PostgreSQL has aborted the
    /// transaction, and its COMMIT would quietly roll back.
    batch_failed: Option<String>,
    /// The batch pinned its connection (a migration run may hold it already).
    batch_pinned: bool,
}

/// Notes an unreachable server for the pipeline (503, not 500); called on
/// the worker's thread, as the error reaches the script.
fn seen<T>(result: Result<T, DbError>) -> Result<T, DbError> {
    if let Err(DbError::Unavailable(_)) = &result {
        cove_core::fault::note_unavailable();
    }
    result
}

fn check_origin(sql: &str, origin: Origin) -> Result<(), DbError> {
    if origin == Origin::App && sql_text::mentions_reserved(sql) {
        Err(DbError::Reserved)
    } else {
        Ok(())
    }
}

impl Pg {
    /// Connects to `url` now, so that a wrong URL or a server that is down
    /// fails at start.
    pub(crate) fn connect(url: &str, schema: Option<&str>) -> Result<Pg, DbError> {
        let link = Link::new(url, schema)?;
        block_on(link.check()).map_err(|e| match e {
            DbError::Unavailable(m) => DbError::Open(m),
            other => other,
        })?;
        Ok(Pg {
            link,
            last_id: Arc::default(),
            in_batch: false,
            batch_failed: None,
            batch_pinned: false,
        })
    }

    /// Notes a failure inside a batch (see `batch_failed`).
    fn noted<T>(&mut self, result: Result<T, DbError>) -> Result<T, DbError> {
        let result = seen(result);
        if let (true, Err(e)) = (self.in_batch, &result) {
            self.batch_failed.get_or_insert_with(|| e.to_string());
        }
        result
    }

    pub(crate) fn query<F>(
        &mut self,
        sql: &str,
        params: &[Value],
        origin: Origin,
        mut each_row: F,
    ) -> Result<(), DbError>
    where
        F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>,
    {
        check_origin(sql, origin)?;
        let result = block_on(self.link.clone().query(sql.to_owned(), params.to_vec()));
        let set = self.noted(result)?;
        let names: Vec<&str> = set.columns.iter().map(String::as_str).collect();
        for row in &set.rows {
            each_row(&names, &Row::of_values(row))?;
        }
        Ok(())
    }

    pub(crate) fn exec(
        &mut self,
        sql: &str,
        params: &[Value],
        origin: Origin,
    ) -> Result<u64, DbError> {
        check_origin(sql, origin)?;
        let result = block_on(self.link.clone().exec(sql.to_owned(), params.to_vec()));
        let (changed, id) = self.noted(result)?;
        if let Some(id) = id {
            self.last_id.store(id, Ordering::Relaxed);
        }
        Ok(changed)
    }

    pub(crate) fn query_later(
        &mut self,
        sql: &str,
        params: Vec<Value>,
        origin: Origin,
    ) -> impl Future<Output = Result<ResultSet, DbError>> + Send + 'static {
        let checked = check_origin(sql, origin);
        let (link, sql) = (self.link.clone(), sql.to_owned());
        async move {
            checked?;
            seen(link.query(sql, params).await)
        }
    }

    pub(crate) fn exec_later(
        &mut self,
        sql: &str,
        params: Vec<Value>,
        origin: Origin,
    ) -> impl Future<Output = Result<(u64, Option<i64>), DbError>> + Send + 'static {
        let checked = check_origin(sql, origin);
        let (link, sql, last_id) = (self.link.clone(), sql.to_owned(), self.last_id.clone());
        async move {
            checked?;
            let done = seen(link.exec(sql, params).await)?;
            if let Some(id) = done.1 {
                last_id.store(id, Ordering::Relaxed);
            }
            Ok(done)
        }
    }

    pub(crate) fn last_id(&self) -> i64 {
        self.last_id.load(Ordering::Relaxed)
    }

    pub(crate) fn in_transaction(&self) -> bool {
        self.in_batch
    }

    pub(crate) fn in_batch(&self) -> bool {
        self.in_batch
    }

    /// Runs transaction control (BEGIN, COMMIT, …) and waits for it.
    fn control(&self, sql: &str) -> Result<(), DbError> {
        seen(block_on(self.link.clone().simple(sql.to_owned()))).map(|_| ())
    }

    pub(crate) fn begin_batch(&mut self) -> Result<(), DbError> {
        if self.in_batch {
            return Err(DbError::Transaction(NESTED.to_owned()));
        }
        self.batch_pinned = seen(block_on(self.link.pin()))?;
        if let Err(e) = self.control("BEGIN") {
            self.end_pin();
            return Err(e);
        }
        self.in_batch = true;
        self.batch_failed = None;
        Ok(())
    }

    /// Lets go of the connection the batch pinned.
    fn end_pin(&mut self) {
        if std::mem::take(&mut self.batch_pinned) {
            self.link.unpin();
        }
    }

    pub(crate) fn commit_batch(&mut self) -> Result<(), DbError> {
        if !self.in_batch {
            return Ok(());
        }
        self.in_batch = false;
        if let Some(first) = self.batch_failed.take() {
            let _ = self.control("ROLLBACK");
            self.end_pin();
            return Err(DbError::Transaction(format!(
                "COMMIT failed: a statement of the batch failed ({first}), so PostgreSQL \
                 rolled the whole batch back"
            )));
        }
        let result = self.control("COMMIT");
        if result.is_err() {
            let _ = self.control("ROLLBACK");
        }
        self.end_pin();
        result.map_err(|e| e.prefixed("COMMIT failed: "))
    }

    pub(crate) fn rollback_batch(&mut self) -> Result<(), DbError> {
        if !self.in_batch {
            return Ok(());
        }
        self.in_batch = false;
        self.batch_failed = None;
        let result = self.control("ROLLBACK");
        self.end_pin();
        result
    }

    pub(crate) fn rollback_stale(&mut self) -> bool {
        let stale = self.in_batch;
        if stale {
            let _ = self.rollback_batch();
        }
        stale
    }

    pub(crate) fn finish_load(&mut self) -> bool {
        let stale = self.rollback_stale();
        if stale {
            cove_core::log::warn("rolled back a transaction the app file left open");
        }
        stale
    }

    pub(crate) fn finish_call(&mut self) -> bool {
        if self.rollback_stale() {
            cove_core::log::warn("rolled back a transaction the script left open");
        }
        false
    }
}
