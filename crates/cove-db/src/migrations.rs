//! Migration files shared by both backends (Hull API §5.4), and the layout
//! that lets one app carry SQL for SQLite and PostgreSQL:
//!
//! - `migrations/NNN_name.sql` is portable and applies on both;
//! - `migrations/NNN_name.sqlite.sql` and `NNN_name.postgres.sql` are
//!   dialect variants: on its own backend a variant replaces the plain file
//!   of the same name, and the other backend ignores it. A variant without a
//!   plain file applies on its backend only.
//!
//! Every file is recorded in `_hull_migrations` under its plain name
//! (`NNN_name.sql`), so `cove migrate status` reads the same on both.

use crate::error::DbError;
use crate::sql_text;
use crate::value::{Row, Value, ValueRef};
use cove_core::AppFiles;
use std::collections::{BTreeMap, HashMap};

const TABLE: &str = "_hull_migrations";

/// Where migrations live in an app.
pub const DIR: &str = "migrations";

/// The SQL dialect of a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// `sqlite` or `postgres`: the variant suffix, and `db.dialect` in scripts.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
        }
    }
}

/// What a migration run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MigrationReport {
    /// Files applied by this run, in order.
    pub applied: Vec<String>,
    /// Files skipped because they hold only whitespace and comments (they are not recorded).
    pub skipped_empty: Vec<String>,
}

/// One migration file and when it was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigrationStatus {
    /// Recorded name, e.g. `001_init.sql`.
    pub name: String,
    /// `applied_at` from `_hull_migrations` (UTC, `YYYY-MM-DD HH:MM:SS`), or `None` if pending.
    pub applied_at: Option<String>,
}

/// One migration to apply on a backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MigrationFile {
    /// The name it is recorded under (`NNN_name.sql`).
    pub name: String,
    /// The file to read, under [`DIR`].
    pub file: String,
}

/// The migrations `dialect` applies, in recorded-name order (bytewise, like
/// strcmp). No `migrations/` directory: none.
pub(crate) fn files(app: &AppFiles, dialect: Dialect) -> Result<Vec<MigrationFile>, DbError> {
    let mut chosen: BTreeMap<String, (String, bool)> = BTreeMap::new();
    for file in app.list(DIR).map_err(|e| failed(DIR, e))? {
        let Some(stem) = file.strip_suffix(".sql").filter(|s| !s.is_empty()) else {
            continue;
        };
        let (name, variant) = match stem.rsplit_once('.') {
            Some((base, "sqlite")) => (base, Some(Dialect::Sqlite)),
            Some((base, "postgres")) => (base, Some(Dialect::Postgres)),
            _ => (stem, None),
        };
        match variant {
            Some(d) if d != dialect => continue,
            _ => {}
        }
        let is_variant = variant.is_some();
        let name = format!("{name}.sql");
        match chosen.get(&name) {
            Some((_, true)) => {}
            _ => {
                chosen.insert(name, (file, is_variant));
            }
        }
    }
    Ok(chosen
        .into_iter()
        .map(|(name, (file, _))| MigrationFile { name, file })
        .collect())
}

/// What a backend provides to the one migration runner below.
pub(crate) trait Migrator {
    const DIALECT: Dialect;
    /// One row when `_hull_migrations` exists; the table name is its parameter.
    const TABLE_EXISTS: &'static str;

    fn query_rows<F>(&mut self, sql: &str, params: &[Value], each_row: F) -> Result<(), DbError>
    where
        F: FnMut(&[&str], &Row<'_>) -> Result<(), DbError>;

    /// `CREATE TABLE IF NOT EXISTS _hull_migrations …` in the backend's types.
    fn create_table(&mut self) -> Result<(), DbError>;

    /// Runs one file and records it as `name`, in one transaction; false if
    /// another process recorded it first.
    fn apply(&mut self, name: &str, sql: &str) -> Result<bool, DbError>;
}

/// Applies, in name order, every migration of the app not yet recorded,
/// each in its own transaction; stops at the first failure. No
/// `migrations/` directory applies nothing.
pub(crate) fn migrate<M: Migrator>(db: &mut M, app: &AppFiles) -> Result<MigrationReport, DbError> {
    db.create_table().map_err(|e| failed(TABLE, e))?;
    let applied = applied(db).map_err(|e| failed(TABLE, e))?;
    let mut report = MigrationReport::default();
    for file in files(app, M::DIALECT)? {
        if applied.contains_key(&file.name) {
            continue;
        }
        let sql = app
            .read(&format!("{DIR}/{}", file.file))
            .map_err(|e| failed(&file.file, e))?;
        let sql = std::str::from_utf8(&sql).map_err(|_| failed(&file.file, "not UTF-8"))?;
        if sql_text::is_blank(sql) {
            report.skipped_empty.push(file.name);
        } else if db
            .apply(&file.name, sql)
            .map_err(|e| failed(&file.file, e))?
        {
            report.applied.push(file.name);
        }
    }
    Ok(report)
}

/// Every migration of the app in apply order, with its `applied_at` if it was applied.
pub(crate) fn status<M: Migrator>(
    db: &mut M,
    app: &AppFiles,
) -> Result<Vec<MigrationStatus>, DbError> {
    let files = files(app, M::DIALECT)?;
    let mut exists = false;
    db.query_rows(M::TABLE_EXISTS, &[Value::Text(TABLE.into())], |_, _| {
        exists = true;
        Ok(())
    })?;
    let applied = if exists { applied(db)? } else { HashMap::new() };
    Ok(files
        .into_iter()
        .map(|f| MigrationStatus {
            applied_at: applied.get(&f.name).cloned(),
            name: f.name,
        })
        .collect())
}

/// Whether `name` is recorded (inside [`Migrator::apply`]'s transaction).
pub(crate) fn recorded<M: Migrator>(db: &mut M, name: &str) -> Result<bool, DbError> {
    let mut taken = false;
    db.query_rows(
        "SELECT 1 FROM _hull_migrations WHERE name = ?",
        &[Value::Text(name.into())],
        |_, _| {
            taken = true;
            Ok(())
        },
    )?;
    Ok(taken)
}

/// The statement that records `name` as applied.
pub(crate) const RECORD: &str = "INSERT INTO _hull_migrations (name) VALUES (?)";

/// name -> applied_at for every recorded migration.
fn applied<M: Migrator>(db: &mut M) -> Result<HashMap<String, String>, DbError> {
    let mut map = HashMap::new();
    db.query_rows(
        "SELECT name, applied_at FROM _hull_migrations",
        &[],
        |_, row| {
            map.insert(text(row.get(0)), text(row.get(1)));
            Ok(())
        },
    )?;
    Ok(map)
}

pub(crate) fn failed(file: &str, message: impl ToString) -> DbError {
    DbError::Migration {
        file: file.to_owned(),
        message: message.to_string(),
    }
}

pub(crate) fn text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Null => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(names: &[&str]) -> (tempfile::TempDir, AppFiles) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(DIR)).unwrap();
        for n in names {
            std::fs::write(dir.path().join(DIR).join(n), "SELECT 1;").unwrap();
        }
        let files = AppFiles::Dir(dir.path().to_path_buf());
        (dir, files)
    }

    fn pick(names: &[&str], d: Dialect) -> Vec<(String, String)> {
        let (_dir, files) = app(names);
        files_of(&files, d)
    }

    fn files_of(app: &AppFiles, d: Dialect) -> Vec<(String, String)> {
        files(app, d)
            .unwrap()
            .into_iter()
            .map(|f| (f.name, f.file))
            .collect()
    }

    #[test]
    fn variants_replace_the_plain_file_on_their_backend_only() {
        let names = [
            "001_init.sql",
            "001_init.postgres.sql",
            "002_seed.sql",
            "003_fts.sqlite.sql",
            "004_x.postgres.sql",
            "notes.txt",
        ];
        let p = |n: &str, f: &str| (n.to_string(), f.to_string());
        assert_eq!(
            pick(&names, Dialect::Sqlite),
            [
                p("001_init.sql", "001_init.sql"),
                p("002_seed.sql", "002_seed.sql"),
                p("003_fts.sql", "003_fts.sqlite.sql"),
            ]
        );
        assert_eq!(
            pick(&names, Dialect::Postgres),
            [
                p("001_init.sql", "001_init.postgres.sql"),
                p("002_seed.sql", "002_seed.sql"),
                p("004_x.sql", "004_x.postgres.sql"),
            ]
        );
    }
}
