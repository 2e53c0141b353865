//! Cove's own prepared statements and their LRU cache, on SQLite's C API.
//!
//! rusqlite keeps a statement's handle private, and reading one value through it takes four
//! API calls (column count, type, text, bytes), each entering the connection. A result row
//! is read here through the column's `sqlite3_value` instead: half the work per value, which
//! is most of what a 20-row query costs outside SQLite itself. Parameters are bound without
//! a copy; the [`Running`] guard clears them before the caller's values can go away.
#![allow(unsafe_code)]

use crate::error::DbError;
use crate::sql_text;
use crate::sqlite::guard::Guard;
use crate::value::{Value, ValueRef};
use crate::Origin;
use hashlink::linked_hash_map::RawEntryMut;
use hashlink::LruCache;
use rusqlite::{ffi, Connection};
use std::cell::Cell;
use std::ffi::{c_int, CStr};
use std::ptr::{self, NonNull};

/// One prepared statement; finalized on drop. It must not outlive its connection, which
/// [`Sqlite`](crate::sqlite::conn::Sqlite) ensures by dropping its cache first.
pub(crate) struct Stmt {
    raw: NonNull<ffi::sqlite3_stmt>,
    db: *mut ffi::sqlite3,
    /// False once the stdlib prepared or ran it with rights app code lacks (in
    /// practice a reserved table): SQLite's authorizer does not see a cached
    /// statement again, so app code is refused it here (guard.rs).
    pub(crate) app_ok: Cell<bool>,
}

// SAFETY: a statement moves with the connection it belongs to (connections are opened with
// SQLITE_OPEN_NO_MUTEX and used by one thread at a time, as rusqlite's own statements are).
unsafe impl Send for Stmt {}

/// What preparing a SQL string produced.
pub(crate) enum Prepared<S> {
    /// Exactly one statement.
    One(S),
    /// Several statements; only `exec` without parameters may run them.
    Several,
    /// Whitespace, comments and `;` only.
    Blank,
}

impl Stmt {
    /// Prepares the first statement of `sql` and tells whether more follow, as rusqlite did:
    /// a tail that prepares to a statement means several. SQL with a NUL byte is refused.
    pub(crate) fn prepare(
        conn: &Connection,
        sql: &str,
        persistent: bool,
    ) -> Result<Prepared<Stmt>, DbError> {
        sql_text::refuse_nul(sql)?;
        // SAFETY: the handle is used only while `conn` is open; statements made from it are
        // dropped before `conn` (see `Stmt`).
        let db = unsafe { conn.handle() };
        match prepare_one_of(db, sql, persistent) {
            // The tail is prepared to see whether it is empty, so a later statement that
            // needs an earlier one (CREATE TABLE t; INSERT INTO t ...) fails here instead.
            Err(_) if sql_text::has_several_statements(sql) => Ok(Prepared::Several),
            other => other,
        }
    }

    /// Whether the statement leaves the database unchanged (`sqlite3_stmt_readonly`).
    pub(crate) fn readonly(&self) -> bool {
        // SAFETY: `raw` is a live statement of this connection (for every method below too).
        unsafe { ffi::sqlite3_stmt_readonly(self.raw.as_ptr()) != 0 }
    }

    /// Number of result columns.
    pub(crate) fn column_count(&self) -> usize {
        // SAFETY: as above.
        let n = unsafe { ffi::sqlite3_column_count(self.raw.as_ptr()) };
        usize::try_from(n).unwrap_or(0)
    }

    /// Number of `?` parameters.
    pub(crate) fn parameter_count(&self) -> usize {
        // SAFETY: as above.
        let n = unsafe { ffi::sqlite3_bind_parameter_count(self.raw.as_ptr()) };
        usize::try_from(n).unwrap_or(0)
    }

    /// Name of result column `i`, valid until the statement is finalized or prepared again
    /// (SQLite re-prepares only in a run's first step, so read names after it).
    pub(crate) fn column_name(&self, i: usize) -> Result<&str, DbError> {
        // SAFETY: as above; `i` is below `column_count()` (SQLite returns NULL otherwise).
        let name = unsafe { ffi::sqlite3_column_name(self.raw.as_ptr(), i as c_int) };
        if name.is_null() {
            return Err(DbError::Sql(
                "out of memory reading a column name".to_owned(),
            ));
        }
        // SAFETY: SQLite returns a NUL-terminated string owned by the statement.
        let name = unsafe { CStr::from_ptr(name) };
        name.to_str()
            .map_err(|_| DbError::Sql("a column name is not valid UTF-8".to_owned()))
    }

    /// Binds `params` without copying them and returns the guard that steps the statement.
    /// Dropping the guard resets the statement and clears the bindings.
    pub(crate) fn start<'s>(&'s self, params: &'s [Value]) -> Result<Running<'s>, DbError> {
        let running = Running { stmt: self };
        for (i, value) in params.iter().enumerate() {
            self.bind(i as c_int + 1, value)?;
        }
        Ok(running)
    }

    fn bind(&self, at: c_int, value: &Value) -> Result<(), DbError> {
        let s = self.raw.as_ptr();
        // SAFETY: text and blob bytes outlive the binding: `Running` clears it on drop, and
        // `start` ties the guard to the lifetime of `params`.
        let rc = unsafe {
            match value {
                Value::Null => ffi::sqlite3_bind_null(s, at),
                Value::Integer(i) => ffi::sqlite3_bind_int64(s, at, *i),
                Value::Real(f) => ffi::sqlite3_bind_double(s, at, *f),
                Value::Text(t) => {
                    ffi::sqlite3_bind_text(s, at, t.as_ptr().cast(), length(t)?, None)
                }
                Value::Blob(b) => {
                    ffi::sqlite3_bind_blob(s, at, b.as_ptr().cast(), length(b)?, None)
                }
            }
        };
        self.check(rc)
    }

    fn check(&self, rc: c_int) -> Result<(), DbError> {
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(error(self.db, rc))
        }
    }
}

impl Drop for Stmt {
    fn drop(&mut self) {
        // SAFETY: the statement is live and finalized exactly once.
        unsafe { ffi::sqlite3_finalize(self.raw.as_ptr()) };
    }
}

/// One of Cove's own statements without parameters (`BEGIN`, `COMMIT`),
/// prepared on first use and kept: run once or twice a turn, they cost ~300
/// instructions less each than through rusqlite's statement cache.
#[derive(Default)]
pub(crate) struct Kept(Option<Stmt>);

impl Kept {
    /// Runs `sql` (always the same for one `Kept`) to completion.
    pub(crate) fn run(&mut self, conn: &Connection, sql: &str) -> Result<(), DbError> {
        let stmt = match &mut self.0 {
            Some(stmt) => stmt,
            empty => match Stmt::prepare(conn, sql, true)? {
                Prepared::One(stmt) => empty.insert(stmt),
                _ => return Err(DbError::Sql(format!("not one statement: {sql}"))),
            },
        };
        let running = stmt.start(&[])?;
        while running.step()? {}
        Ok(())
    }
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Kept(prepared)"
        } else {
            "Kept"
        })
    }
}

/// A statement with its parameters bound, between its first step and its reset.
pub(crate) struct Running<'s> {
    stmt: &'s Stmt,
}

impl Running<'_> {
    /// Steps once; true when a row is ready.
    pub(crate) fn step(&self) -> Result<bool, DbError> {
        // SAFETY: a live statement with its parameters bound.
        match unsafe { ffi::sqlite3_step(self.stmt.raw.as_ptr()) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            rc => Err(error(self.stmt.db, rc)),
        }
    }

    /// The statement, e.g. for its column names.
    pub(crate) fn stmt(&self) -> &Stmt {
        self.stmt
    }

    /// Value of column `i` of the current row; `Null` when `i` is not below `len`.
    /// Inlined: it runs once per value read, in the caller's loop over a row.
    #[inline]
    pub(crate) fn value(&self, i: usize, len: usize) -> ValueRef<'_> {
        if i >= len {
            return ValueRef::Null;
        }
        // SAFETY: a row is ready (callers read only after `step` returned true) and `i` is a
        // column of it. The bytes stay put until the next step or reset, which needs `&self`
        // after this borrow ends. SQLite returns NULL text only for empty values (blobs) or
        // when out of memory, where Rust's allocator would have aborted first.
        unsafe {
            let v = ffi::sqlite3_column_value(self.stmt.raw.as_ptr(), i as c_int);
            match ffi::sqlite3_value_type(v) {
                ffi::SQLITE_INTEGER => ValueRef::Integer(ffi::sqlite3_value_int64(v)),
                ffi::SQLITE_FLOAT => ValueRef::Real(ffi::sqlite3_value_double(v)),
                ffi::SQLITE_TEXT => {
                    let p = ffi::sqlite3_value_text(v);
                    ValueRef::Text(bytes(p, ffi::sqlite3_value_bytes(v)))
                }
                ffi::SQLITE_BLOB => {
                    let p = ffi::sqlite3_value_blob(v).cast();
                    ValueRef::Blob(bytes(p, ffi::sqlite3_value_bytes(v)))
                }
                _ => ValueRef::Null,
            }
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let s = self.stmt.raw.as_ptr();
        // SAFETY: a live statement; reset reports the last step's error again, already seen.
        unsafe {
            ffi::sqlite3_reset(s);
            ffi::sqlite3_clear_bindings(s);
        }
    }
}

/// The first statement of `sql`, or whether there are several or none.
fn prepare_one_of(
    db: *mut ffi::sqlite3,
    sql: &str,
    persistent: bool,
) -> Result<Prepared<Stmt>, DbError> {
    let Some((stmt, rest)) = prepare_first(db, sql, persistent)? else {
        return Ok(Prepared::Blank);
    };
    let rest = sql.get(rest..).unwrap_or_default();
    if !sql_text::is_blank(rest) && prepare_first(db, rest, false)?.is_some() {
        return Ok(Prepared::Several);
    }
    Ok(Prepared::One(stmt))
}

/// Bytes SQLite handed out; empty for a NULL pointer.
///
/// SAFETY: `p` is NULL or points at `n` bytes that live as long as `'a`.
unsafe fn bytes<'a>(p: *const u8, n: c_int) -> &'a [u8] {
    match usize::try_from(n) {
        Ok(n) if !p.is_null() && n > 0 => unsafe { std::slice::from_raw_parts(p, n) },
        _ => &[],
    }
}

fn length(b: &[u8]) -> Result<c_int, DbError> {
    c_int::try_from(b.len()).map_err(|_| code_error(ffi::SQLITE_TOOBIG))
}

/// Prepares the first statement of `sql`: `None` when it holds none, with the byte offset
/// where the rest begins.
fn prepare_first(
    db: *mut ffi::sqlite3,
    sql: &str,
    persistent: bool,
) -> Result<Option<(Stmt, usize)>, DbError> {
    let len = c_int::try_from(sql.len()).map_err(|_| code_error(ffi::SQLITE_TOOBIG))?;
    let flags = if persistent {
        ffi::SQLITE_PREPARE_PERSISTENT
    } else {
        0
    };
    let mut raw = ptr::null_mut();
    let mut tail = ptr::null();
    // SAFETY: `db` is the open connection; `sql` is `len` readable bytes.
    let rc = unsafe {
        ffi::sqlite3_prepare_v3(db, sql.as_ptr().cast(), len, flags, &mut raw, &mut tail)
    };
    if rc != ffi::SQLITE_OK {
        return Err(error(db, rc));
    }
    let Some(raw) = NonNull::new(raw) else {
        return Ok(None);
    };
    // SAFETY: SQLite sets `tail` inside `sql` (or at its end).
    let offset = unsafe { tail.cast::<u8>().offset_from(sql.as_ptr()) };
    let rest = usize::try_from(offset).map_or(sql.len(), |o| o.min(sql.len()));
    let stmt = Stmt {
        raw,
        db,
        app_ok: Cell::new(true),
    };
    Ok(Some((stmt, rest)))
}

/// The error SQLite reported for `rc`, classified like rusqlite's: constraint, busy,
/// storage fault, or SQL.
fn error(db: *mut ffi::sqlite3, rc: c_int) -> DbError {
    // SAFETY: `db` is the open connection; both calls return NUL-terminated strings.
    let mut message = unsafe {
        if ffi::sqlite3_errcode(db) == rc {
            CStr::from_ptr(ffi::sqlite3_errmsg(db))
                .to_string_lossy()
                .into_owned()
        } else {
            return code_error(rc);
        }
    };
    if let Some(why) = os_error(db, rc) {
        message = format!("{message}: {why}");
    }
    classify(rc, message)
}

/// What the operating system said when SQLite's I/O failed: "disk I/O error" alone
/// does not tell a full disk from a file size limit or a vanished mount.
fn os_error(db: *mut ffi::sqlite3, rc: c_int) -> Option<std::io::Error> {
    // SQLite records the errno of these two only (sqlite3SystemError).
    if !matches!(rc & 0xff, ffi::SQLITE_IOERR | ffi::SQLITE_CANTOPEN) {
        return None;
    }
    // SAFETY: `db` is the open connection.
    let errno = unsafe { ffi::sqlite3_system_errno(db) };
    (errno != 0).then(|| std::io::Error::from_raw_os_error(errno))
}

/// A rusqlite error as a [`DbError`], with the operating system's reason for an I/O
/// failure (see [`os_error`]).
pub(crate) fn from_rusqlite(conn: &Connection, err: rusqlite::Error) -> DbError {
    let rc = match &err {
        rusqlite::Error::SqliteFailure(e, _) => e.extended_code,
        _ => ffi::SQLITE_OK,
    };
    // SAFETY: the handle is only read from, while `conn` is open.
    let why = os_error(unsafe { conn.handle() }, rc);
    match (DbError::from(err), why) {
        (DbError::Unavailable(m), Some(why)) => DbError::Unavailable(format!("{m}: {why}")),
        (other, _) => other,
    }
}

fn code_error(rc: c_int) -> DbError {
    // SAFETY: sqlite3_errstr returns a static NUL-terminated string for any code.
    let message = unsafe { CStr::from_ptr(ffi::sqlite3_errstr(rc)) };
    classify(rc, message.to_string_lossy().into_owned())
}

fn classify(rc: c_int, message: String) -> DbError {
    match rc & 0xff {
        ffi::SQLITE_CONSTRAINT => DbError::Constraint(message),
        ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED => DbError::Busy(message),
        // The storage, not the statement: the request may succeed later (503).
        ffi::SQLITE_FULL | ffi::SQLITE_IOERR | ffi::SQLITE_CANTOPEN => {
            DbError::Unavailable(message)
        }
        _ => DbError::Sql(message),
    }
}

/// Prepared statements of one connection, least recently used evicted first.
pub(crate) struct StmtCache {
    lru: LruCache<Box<str>, Stmt>,
}

impl StmtCache {
    pub(crate) fn new(capacity: usize) -> StmtCache {
        StmtCache {
            lru: LruCache::new(capacity),
        }
    }

    /// The cached statement for `sql`, prepared on first use (with the rights `guard`
    /// was given for `origin`). App code is refused a statement the stdlib prepared
    /// with its extra rights, as touching the reserved tables: the stdlib's SQL
    /// uses no other (renames are for migrations, which run uncached).
    pub(crate) fn prepare(
        &mut self,
        conn: &Connection,
        sql: &str,
        origin: Origin,
        guard: &Guard,
    ) -> Result<Prepared<&Stmt>, DbError> {
        match self.lru.raw_entry_mut().from_key(sql) {
            RawEntryMut::Occupied(mut hit) => {
                hit.to_back();
                let stmt = hit.into_mut();
                if origin == Origin::App && !stmt.app_ok.get() {
                    return Err(DbError::Reserved);
                }
                Ok(Prepared::One(stmt))
            }
            RawEntryMut::Vacant(slot) => Ok(match Stmt::prepare(conn, sql, true)? {
                Prepared::One(stmt) => {
                    stmt.app_ok.set(!guard.granted());
                    Prepared::One(slot.insert(sql.into(), stmt).1)
                }
                Prepared::Several => Prepared::Several,
                Prepared::Blank => Prepared::Blank,
            }),
        }
    }
}
