//! Opening a database file, and saying what is wrong with one that cannot
//! be used: a missing directory, a directory where the file should be, a
//! file this process may not write, a damaged file, a full disk. Each is
//! found at start, so a server refuses to start rather than fail requests.

use std::fs::OpenOptions;
use std::path::Path;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, MAIN_DB};

use crate::error::DbError;
use crate::sqlite::conn::{Sqlite, STATEMENT_CACHE_CAPACITY};
use crate::sqlite::group::Group;
use crate::sqlite::guard::Guard;
use crate::sqlite::lock::{LockHold, WriteLock};
use crate::sqlite::stmt::{from_rusqlite, StmtCache};

/// Applied to every read-write connection, `:memory:` included. busy_timeout comes first so
/// that switching a fresh file to WAL waits for, rather than fails against, another opener.
const PRAGMAS: &str = "PRAGMA busy_timeout = 5000;
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = NORMAL;
    PRAGMA foreign_keys = ON;
    PRAGMA cache_size = -16384;
    PRAGMA temp_store = MEMORY;
    PRAGMA mmap_size = 268435456;
    PRAGMA wal_autocheckpoint = 1000;";

/// Applied to read-only connections (the journal mode is the file's own).
const READONLY_PRAGMAS: &str = "PRAGMA busy_timeout = 5000;
    PRAGMA foreign_keys = ON;
    PRAGMA cache_size = -16384;
    PRAGMA temp_store = MEMORY;
    PRAGMA mmap_size = 268435456;";

const DAMAGED: &str = "the file is damaged or is not an SQLite database; restore it from a \
     backup, or move it aside to start with an empty database";

impl Sqlite {
    /// Opens (creating if needed) a read-write database; `lock` must be shared by every `Sqlite` of `path`.
    pub fn open(path: &Path, lock: WriteLock) -> Result<Sqlite, DbError> {
        let conn = Connection::open(path).map_err(|e| open_error(path, None, e))?;
        // SQLite opens a file it may not write read-only, without a word; every
        // write would then fail while the server looked healthy.
        if conn.is_readonly(MAIN_DB).unwrap_or(false) {
            return Err(read_only(path));
        }
        let mut db = Sqlite::configure(conn, lock, PRAGMAS, path)?;
        let mode: String = db
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .map_err(|e| open_error(path, Some(&db.conn), e))?;
        db.group.snapshots = mode.eq_ignore_ascii_case("wal");
        Ok(db)
    }

    /// Opens an existing database read-only (for tooling such as `cove migrate --status`).
    pub fn open_readonly(path: &Path) -> Result<Sqlite, DbError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| open_error(path, None, e))?;
        Sqlite::configure(conn, WriteLock::default(), READONLY_PRAGMAS, path)
    }

    fn configure(
        mut conn: Connection,
        lock: WriteLock,
        pragmas: &str,
        path: &Path,
    ) -> Result<Sqlite, DbError> {
        let setup = |conn: &mut Connection| -> rusqlite::Result<Guard> {
            conn.execute_batch(pragmas)?;
            // Refuses what would corrupt the file on purpose (writable_schema,
            // writes to FTS shadow tables, ...) even to Cove's own statements.
            conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
            // Reads the schema now: a damaged one fails here, naming the file,
            // rather than at the first request.
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))?;
            Guard::install(conn)
        };
        let guard = setup(&mut conn).map_err(|e| open_error(path, Some(&conn), e))?;
        Ok(Sqlite {
            stmts: StmtCache::new(STATEMENT_CACHE_CAPACITY),
            group: Group::default(),
            guard,
            conn,
            hold: LockHold::new(lock),
        })
    }
}

/// `cannot open database <path>: <why>`: the file system's account when the
/// path itself is wrong, else SQLite's words and what to do about them.
fn open_error(path: &Path, conn: Option<&Connection>, e: rusqlite::Error) -> DbError {
    let code = e.sqlite_error_code();
    let sqlite = match conn {
        Some(conn) => from_rusqlite(conn, e),
        None => DbError::from(e),
    };
    let why = match (misplaced(path), code) {
        (Some(why), _) => why,
        (None, Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)) => {
            format!("{sqlite}: {DAMAGED}")
        }
        (None, Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)) => match write_probe(path) {
            Some(why) => format!("{sqlite} ({why}); {GIVE_ACCESS}"),
            None => sqlite.to_string(),
        },
        (None, Some(ErrorCode::DiskFull | ErrorCode::SystemIoFailure)) => {
            format!("{sqlite}; free some disk space (or raise the file size limit) and start again")
        }
        _ => sqlite.to_string(),
    };
    DbError::Open(format!("cannot open database {}: {why}", path.display()))
}

const GIVE_ACCESS: &str =
    "give the user running cove write access to the file and to its directory";

/// The error for a file SQLite could open only for reading.
fn read_only(path: &Path) -> DbError {
    let why = write_probe(path).unwrap_or_else(|| "read-only".to_owned());
    DbError::Open(format!(
        "cannot open database {}: this process may not write it ({why}); {GIVE_ACCESS}",
        path.display()
    ))
}

/// What is wrong with `path` as a place for a database file, if the file
/// system alone can tell: SQLite's own words name neither the problem nor the fix.
fn misplaced(path: &Path) -> Option<String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            return Some(format!(
                "directory {} does not exist; create it first",
                dir.display()
            ));
        }
        if !dir.is_dir() {
            return Some(format!(
                "{} is not a directory; name a database file in a directory",
                dir.display()
            ));
        }
    }
    path.is_dir().then(|| {
        format!(
            "it is a directory; name a file in it, such as {}",
            path.join("data.db").display()
        )
    })
}

/// Why this process cannot write `path`, or create the files SQLite keeps
/// beside it (`-wal`, `-shm`), as the file system says: it opens the file for
/// writing, and creates and removes a file (the database itself if it does
/// not exist yet).
fn write_probe(path: &Path) -> Option<String> {
    if path.as_os_str() == ":memory:" || path.to_string_lossy().starts_with("file:") {
        return None;
    }
    let created = if path.exists() {
        if let Err(e) = OpenOptions::new().read(true).write(true).open(path) {
            return Some(e.to_string());
        }
        None
    } else {
        Some(path.to_path_buf())
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let probe =
        created.unwrap_or_else(|| dir.join(format!(".cove-write-probe-{}", std::process::id())));
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(e) => Some(format!("cannot create files in {}: {e}", dir.display())),
    }
}
