//! The SQLite authorizer (`sqlite3_set_authorizer`) that holds app code to
//! the rules of rules.rs, whatever its SQL text looks like: SQLite asks it
//! about every table and column a statement reads or writes — through views
//! and triggers too — and every function, PRAGMA and ATTACH.
//!
//! SQLite asks while it prepares a statement (and when it prepares one again
//! after a schema change, inside a step), so the connection must know who the
//! statement is for at both times: [`Guard::begin`] sets that at the start of
//! every call. A statement in the cache is not asked about again, so one the
//! stdlib prepared remembers whether it used rights app code lacks, and app
//! code is refused it (stmt.rs, `StmtCache::prepare`).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use rusqlite::hooks::{AuthContext, Authorization};
use rusqlite::Connection;

use crate::error::DbError;
use crate::sqlite::rules::{access, Access, Denial};
use crate::Origin;

/// Who a statement runs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Rights {
    /// App code: its own tables only, under the rules of rules.rs.
    App = 0,
    /// The stdlib and migrations: app code's rights and the reserved tables.
    Stdlib = 1,
    /// Cove itself: its PRAGMAs at open, maintenance at shutdown, and the
    /// tools run by the database's owner (`cove db`).
    Internal = 2,
}

impl From<Origin> for Rights {
    fn from(origin: Origin) -> Rights {
        match origin {
            Origin::App => Rights::App,
            Origin::Stdlib => Rights::Stdlib,
        }
    }
}

const RIGHTS: u8 = 0b11;
/// The authorizer let the stdlib do what app code may not since `begin`.
const GRANTED: u8 = 1 << 2;
/// The authorizer refused something since `begin` (its reason in `denial`).
const DENIED: u8 = 1 << 3;

/// One connection's authorizer state, shared with the closure SQLite calls.
#[derive(Clone)]
pub(crate) struct Guard(Arc<Shared>);

struct Shared {
    /// [`Rights`] in the low bits, then `GRANTED` and `DENIED`: one store
    /// per call resets all three. Atomic only because the closure must be
    /// `Send`; one thread uses a connection at a time.
    state: AtomicU8,
    denial: Mutex<Option<Denial>>,
}

impl Guard {
    /// Installs the authorizer on `conn`; statements run with Cove's own
    /// rights until the first [`Guard::begin`].
    pub(crate) fn install(conn: &mut Connection) -> rusqlite::Result<Guard> {
        let guard = Guard(Arc::new(Shared {
            state: AtomicU8::new(Rights::Internal as u8),
            denial: Mutex::new(None),
        }));
        let seen = guard.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| seen.decide(&ctx)))?;
        Ok(guard)
    }

    /// The statements that follow run with `rights`.
    #[inline]
    pub(crate) fn begin(&self, rights: Rights) {
        self.0.state.store(rights as u8, Ordering::Relaxed);
    }

    /// Forget a refusal whose error was set aside (a statement prepared only
    /// to count statements, which then run one by one).
    pub(crate) fn clear_denial(&self) {
        self.0.state.fetch_and(!DENIED, Ordering::Relaxed);
    }

    /// Whether the stdlib did what app code may not since [`Guard::begin`].
    #[inline]
    pub(crate) fn granted(&self) -> bool {
        self.0.state.load(Ordering::Relaxed) & GRANTED != 0
    }

    /// The error to report for `err`: the authorizer's reason when it
    /// refused something since [`Guard::begin`] (SQLite's own words are
    /// only "not authorized"), else `err`.
    pub(crate) fn explain(&self, err: DbError) -> DbError {
        if self.0.state.load(Ordering::Relaxed) & DENIED == 0 {
            return err;
        }
        self.clear_denial();
        match self.0.denial.lock().take() {
            Some(Denial::Reserved) => DbError::Reserved,
            Some(denial) => DbError::Denied(denial.message()),
            None => err,
        }
    }

    fn decide(&self, ctx: &AuthContext<'_>) -> Authorization {
        let state = self.0.state.load(Ordering::Relaxed);
        let rights = state & RIGHTS;
        if rights == Rights::Internal as u8 {
            return Authorization::Allow;
        }
        match access(&ctx.action) {
            Access::Open => Authorization::Allow,
            Access::Stdlib(_) if rights == Rights::Stdlib as u8 => {
                if state & GRANTED == 0 {
                    self.0.state.fetch_or(GRANTED, Ordering::Relaxed);
                }
                Authorization::Allow
            }
            Access::Stdlib(denial) | Access::Cove(denial) => self.deny(denial),
        }
    }

    fn deny(&self, denial: Denial) -> Authorization {
        *self.0.denial.lock() = Some(denial);
        self.0.state.fetch_or(DENIED, Ordering::Relaxed);
        Authorization::Deny
    }
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rights = match self.0.state.load(Ordering::Relaxed) & RIGHTS {
            0 => "app",
            1 => "stdlib",
            _ => "internal",
        };
        f.debug_struct("Guard").field("rights", &rights).finish()
    }
}
