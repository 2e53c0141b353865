//! PostgreSQL errors as [`DbError`]s, sorted by what the app (and the server) can do
//! about them, with PostgreSQL's own words as the message.
//!
//! | PostgreSQL                                              | DbError        |
//! |---------------------------------------------------------|----------------|
//! | SQLSTATE class 23 (unique, foreign key, not null, check…) | `Constraint` |
//! | 40001 serialization failure, 40P01 deadlock, 55P03 lock not available | `Busy` |
//! | class 08 (connection exception), 53300 too many connections, 57P01/57P02/57P03 (shutdown, crash, starting up) | `Unavailable` |
//! | no SQLSTATE: connection closed, or an I/O error underneath | `Unavailable` |
//! | a parameter Cove could not encode ([`ParamError`])     | `Params`       |
//! | anything else                                           | `Sql`          |
//!
//! `55P03` is what `lock_timeout` and `NOWAIT` raise: like SQLite's "database is locked",
//! the statement may succeed when retried, so it is `Busy` too.

use std::error::Error as _;
use std::io;

use super::types::ParamError;
use crate::error::DbError;

/// Converts an error of the PostgreSQL client into Cove's error.
///
/// Errors with an I/O error underneath (connecting, reading, writing, a garbled
/// response) all mean the connection cannot be used any more, hence `Unavailable`:
/// the request gets 503 and a new connection is made for the next one.
pub(crate) fn db_error(e: tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        return server_error(db.code().code(), db.message(), db.detail());
    }
    let source = e.source();
    if let Some(param) = source.and_then(|s| s.downcast_ref::<ParamError>()) {
        return DbError::Params(param.to_string());
    }
    // The client's `Display` names only the kind of failure; the cause says what happened.
    let reason = match source {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    };
    if e.is_closed() || source.is_some_and(|s| s.is::<io::Error>()) {
        unavailable(&reason)
    } else {
        DbError::Sql(reason)
    }
}

/// Maps an error the server reported: its SQLSTATE `code`, primary `message` and
/// optional `detail` (PostgreSQL's `DETAIL:` line).
fn server_error(code: &str, message: &str, detail: Option<&str>) -> DbError {
    match code {
        "40001" | "40P01" | "55P03" => DbError::Busy(message.to_owned()),
        // The detail names the offending key or row, which the app needs to tell the
        // user what clashed (`Key (email)=(a@b) already exists.`).
        _ if code.starts_with("23") => DbError::Constraint(match detail {
            Some(detail) => format!("{message} ({detail})"),
            None => message.to_owned(),
        }),
        "53300" | "57P01" | "57P02" | "57P03" => unavailable(message),
        _ if code.starts_with("08") => unavailable(message),
        _ => DbError::Sql(message.to_owned()),
    }
}

fn unavailable(reason: &str) -> DbError {
    DbError::Unavailable(format!("PostgreSQL unavailable: {reason}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraint_violations_keep_message_and_detail() {
        let e = server_error(
            "23505",
            "duplicate key value violates unique constraint \"users_email_key\"",
            Some("Key (email)=(a@b) already exists."),
        );
        assert!(matches!(e, DbError::Constraint(_)));
        assert_eq!(
            e.to_string(),
            "duplicate key value violates unique constraint \"users_email_key\" \
             (Key (email)=(a@b) already exists.)"
        );
        for code in ["23503", "23502", "23514", "23P01"] {
            assert!(matches!(server_error(code, "m", None), DbError::Constraint(m) if m == "m"));
        }
        assert_eq!(
            server_error("23502", "null value in column \"x\"", None).code(),
            "db.constraint"
        );
    }

    #[test]
    fn retryable_conflicts_are_busy() {
        for code in ["40001", "40P01", "55P03"] {
            let e = server_error(code, "deadlock detected", Some("Process 1 waits …"));
            assert!(
                matches!(e, DbError::Busy(ref m) if m == "deadlock detected"),
                "{code}"
            );
        }
    }

    #[test]
    fn server_going_away_is_unavailable() {
        for code in [
            "53300", "57P01", "57P02", "57P03", "08006", "08001", "08P01",
        ] {
            let e = server_error(
                code,
                "terminating connection due to administrator command",
                None,
            );
            assert_eq!(e.code(), "db.unavailable", "{code}");
            assert_eq!(
                e.to_string(),
                "PostgreSQL unavailable: terminating connection due to administrator command"
            );
        }
    }

    #[test]
    fn other_errors_keep_postgres_words() {
        let e = server_error("42P01", "relation \"todos\" does not exist", None);
        assert!(matches!(e, DbError::Sql(ref m) if m == "relation \"todos\" does not exist"));
        assert_eq!(
            server_error("42601", "syntax error at or near \"SELEC\"", None).code(),
            "db.sql"
        );
        // Class 57 beyond the shutdown codes (here: statement timeout) is not unavailability.
        assert_eq!(
            server_error(
                "57014",
                "canceling statement due to statement timeout",
                None
            )
            .code(),
            "db.sql"
        );
    }

    /// A connection that fails at the socket: no server needed.
    #[cfg(unix)]
    #[test]
    fn unreachable_server_is_unavailable() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let mut config = tokio_postgres::Config::new();
        config.host_path("/nonexistent/cove-test").user("cove");
        let e = runtime
            .block_on(config.connect(tokio_postgres::NoTls))
            .err()
            .expect("no server there");
        let e = db_error(e);
        assert_eq!(e.code(), "db.unavailable");
        assert!(e.to_string().starts_with("PostgreSQL unavailable: "), "{e}");
    }
}
