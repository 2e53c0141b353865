//! The database's metrics (`--metrics`): statements and their time, waits
//! for the write lock, group-commit sizes, migrations applied. Recorded
//! only when `cove_core::telemetry::on()`; the handles of each thread are
//! made once (no registry lookup a statement).

use std::cell::OnceCell;
use std::time::Instant;

use metrics::{Counter, Histogram};

struct Handles {
    queries: Counter,
    failed: Counter,
    time: Histogram,
}

thread_local! {
    static HANDLES: OnceCell<Handles> = const { OnceCell::new() };
}

/// One statement that started at `started`, and whether it failed.
#[cold]
pub(crate) fn statement(started: Instant, ok: bool) {
    let seconds = started.elapsed().as_secs_f64();
    HANDLES.with(|h| {
        let h = h.get_or_init(|| Handles {
            queries: metrics::counter!("cove_db_queries_total"),
            failed: metrics::counter!("cove_db_query_errors_total"),
            time: metrics::histogram!("cove_db_query_duration_seconds"),
        });
        h.queries.increment(1);
        if !ok {
            h.failed.increment(1);
        }
        h.time.record(seconds);
    });
}

/// A wait for the write lock (only waits: an uncontended take is not one).
#[cold]
pub(crate) fn lock_wait(started: Instant) {
    metrics::histogram!("cove_db_write_lock_wait_seconds").record(started.elapsed().as_secs_f64());
}

/// A write group ended, committed or not, holding `writes` statements.
#[cold]
pub(crate) fn group(writes: u32, committed: bool) {
    metrics::histogram!("cove_db_group_commit_writes").record(f64::from(writes));
    if !committed {
        metrics::counter!("cove_db_group_commit_failures_total").increment(1);
    }
}

/// Migrations applied to the served database at start (a scratch
/// database's, checked before, are not).
pub fn count_migrations(applied: usize) {
    if cove_core::telemetry::on() {
        metrics::counter!("cove_db_migrations_applied_total").increment(applied as u64);
    }
}
