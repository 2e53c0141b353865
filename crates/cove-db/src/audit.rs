//! The audit lines of the stdlib's writes to its reserved `_hull_*` tables
//! (`db.exec`, `db.query`): sessions, idempotency keys, inbox and outbox
//! rows. Only the SQL text is logged (the stdlib's own, with `?`
//! placeholders) and how many parameters it had, never their values: they
//! hold session ids and the data the app stores. The app's own statements
//! are not logged (Hull logs every one; see docs/compat.md).

use std::future::Future;

use cove_core::audit::{self, Context, Event};

use crate::db::Origin;
use crate::error::DbError;

/// A write the log should show, captured where it was asked for.
pub(crate) struct Write {
    ctx: Context,
    cap: &'static str,
    sql: String,
    nparams: usize,
}

impl Write {
    /// `Some` if `sql` from `origin` is a stdlib write and the log is on.
    /// The origin is compared first: app statements pay nothing more.
    #[inline]
    pub(crate) fn of(
        cap: &'static str,
        origin: Origin,
        sql: &str,
        nparams: usize,
    ) -> Option<Write> {
        if origin != Origin::Stdlib || !audit::enabled() || !writes(sql) {
            return None;
        }
        Some(Write {
            ctx: audit::context(),
            cap,
            sql: one_line(sql),
            nparams,
        })
    }

    /// Log it with its outcome: rows changed (`exec`), or an error.
    pub(crate) fn done(self, outcome: Result<Option<u64>, &DbError>) {
        let line = Event::with(&self.ctx, self.cap)
            .str("sql", &self.sql)
            .int("nparams", i64::try_from(self.nparams).unwrap_or(i64::MAX));
        let line = match outcome {
            Ok(Some(n)) => line
                .int("changes", i64::try_from(n).unwrap_or(i64::MAX))
                .str("result", "ok"),
            Ok(None) => line.str("result", "ok"),
            Err(e) => line.str("result", "error").str("error", e.code()),
        };
        line.emit();
    }
}

/// `fut`, logging `write` (if any) once it is done.
pub(crate) async fn after<T>(
    write: Option<Write>,
    fut: impl Future<Output = Result<T, DbError>>,
    changes: fn(&T) -> Option<u64>,
) -> Result<T, DbError> {
    let result = fut.await;
    if let Some(w) = write {
        w.done(result.as_ref().map(changes));
    }
    result
}

/// Whether `sql` may change the database: anything but a plain read.
/// Lexical (the statement has not been prepared here), and erring towards
/// logging: a `WITH` that names a write counts as one.
pub(crate) fn writes(sql: &str) -> bool {
    let word: String = skip_comments(sql)
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    match word.as_str() {
        "SELECT" | "VALUES" | "EXPLAIN" => false,
        "WITH" => {
            let upper = sql.to_ascii_uppercase();
            ["INSERT", "UPDATE", "DELETE", "REPLACE"]
                .iter()
                .any(|w| upper.contains(w))
        }
        _ => true,
    }
}

/// `sql` from its first word on: whitespace and comments before it skipped.
fn skip_comments(mut sql: &str) -> &str {
    loop {
        sql = sql.trim_start();
        if let Some(rest) = sql.strip_prefix("--") {
            sql = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if let Some(rest) = sql.strip_prefix("/*") {
            sql = rest.split_once("*/").map_or("", |(_, r)| r);
        } else {
            return sql;
        }
    }
}

/// The stdlib's multi-line SQL on one line: runs of whitespace become one
/// space (a log line should read as one).
fn one_line(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_told_from_writes() {
        for read in [
            "SELECT 1",
            "  -- why\n select * FROM _hull_sessions",
            "/* x */ VALUES (1)",
            "WITH t AS (SELECT 1) SELECT * FROM t",
        ] {
            assert!(!writes(read), "{read}");
        }
        for write in [
            "INSERT INTO _hull_sessions VALUES (?)",
            "\n  UPDATE _hull_outbox SET a = 1 RETURNING id",
            "delete from _hull_inbox_processed",
            "CREATE TABLE IF NOT EXISTS _hull_sessions (id TEXT)",
            "WITH d AS (DELETE FROM _hull_x RETURNING 1) SELECT count(*) FROM d",
        ] {
            assert!(writes(write), "{write}");
        }
    }

    #[test]
    fn app_statements_and_a_closed_log_make_no_line() {
        // The log is off in this crate's tests.
        let sql = "INSERT INTO _hull_sessions VALUES (?)";
        assert!(Write::of("db.exec", Origin::App, sql, 1).is_none());
        assert!(Write::of("db.exec", Origin::Stdlib, sql, 1).is_none());
    }

    #[test]
    fn sql_is_put_on_one_line() {
        assert_eq!(
            one_line("INSERT INTO t\n   (a, b)\n\tVALUES (?, ?)"),
            "INSERT INTO t (a, b) VALUES (?, ?)"
        );
    }
}
