//! `cove migrate [dir]`, `cove migrate status`, `cove migrate new <name>`
//! (Hull §1.1): the same output lines and exit codes as `hull migrate`, with
//! the failing file and SQLite's reason added where Hull only says "failed".

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use cove_core::AppFiles;
use cove_db::{Db, DbError, MigrationStatus, WriteLock};

use crate::cli::{MigrateArgs, MigrateCommand};

/// Prefix of every line this command prints, as Hull's `hull migrate:`.
const WHO: &str = "cove migrate";

pub fn run(args: &MigrateArgs) -> Result<i32> {
    let result = match &args.command {
        None => apply(args.dir.as_deref(), &args.target.db),
        Some(MigrateCommand::Status { dir, target }) => status(dir.as_deref(), &target.db),
        Some(MigrateCommand::New { name, dir }) => create(name, dir.as_deref()),
    };
    // Print errors ourselves so they read `cove migrate: …` like the other lines.
    result.or_else(|e| {
        eprintln!("{WHO}: {e:#}");
        Ok(1)
    })
}

/// The app directory, which must exist (`.` when not given).
fn app_dir(dir: Option<&Path>) -> Result<PathBuf> {
    let dir = dir.unwrap_or(Path::new("."));
    if !dir.is_dir() {
        bail!(
            "{} is not a directory; pass the app directory (the one holding migrations/)",
            dir.display()
        );
    }
    Ok(dir.to_path_buf())
}

/// `rel` inside the app directory as the user would type it: `migrations/…`
/// when they named no directory, `<dir>/migrations/…` when they did.
fn shown(dir: Option<&Path>, rel: &str) -> PathBuf {
    match dir {
        Some(d) => d.join(rel),
        None => PathBuf::from(rel),
    }
}

/// The migration files of `files` in apply order. Listed through an
/// in-memory database so the rules (which files count, their order) are
/// cove-db's, and no file is created just to learn there is nothing to do.
fn migration_files(files: &AppFiles) -> Result<Vec<String>> {
    let mut db = Db::open(Path::new(":memory:"), WriteLock::default())?;
    Ok(db
        .migration_status(files)?
        .into_iter()
        .map(|m| m.name)
        .collect())
}

fn apply(dir: Option<&Path>, db_path: &Path) -> Result<i32> {
    let files = AppFiles::Dir(app_dir(dir)?);
    if migration_files(&files)?.is_empty() {
        println!("{WHO}: no migrations found");
        return Ok(0);
    }
    let mut db = crate::target::open_cli(db_path)?;
    let report = match db.migrate(&files) {
        Ok(report) => report,
        Err(DbError::Migration { file, message }) => {
            eprintln!(
                "{WHO}: migration failed: {}: {message}",
                shown(dir, &format!("migrations/{file}")).display()
            );
            // Each file has its own transaction: earlier ones stay applied.
            eprintln!("{WHO}: {file} was rolled back; fix it and run `cove migrate` again");
            return Ok(1);
        }
        Err(e) => bail!("migration failed: {e}"),
    };
    for name in &report.skipped_empty {
        eprintln!("{WHO}: skipped {name}: it has no SQL yet (it stays pending)");
    }
    if report.applied.is_empty() {
        println!("{WHO}: already up to date");
    } else {
        println!("{WHO}: applied {} migration(s)", report.applied.len());
        for name in &report.applied {
            println!("  {name}");
        }
    }
    Ok(0)
}

fn status(dir: Option<&Path>, db_path: &Path) -> Result<i32> {
    let files = AppFiles::Dir(app_dir(dir)?);
    // Status only reads: a missing database means nothing is applied yet, and
    // an existing one is opened read-only so looking never changes it.
    let list = if crate::target::postgres_url(db_path).is_some() {
        crate::target::open_cli(db_path)?.migration_status(&files)?
    } else if db_path.exists() {
        Db::open_readonly(db_path)?.migration_status(&files)?
    } else {
        migration_files(&files)?
            .into_iter()
            .map(|name| MigrationStatus {
                name,
                applied_at: None,
            })
            .collect()
    };
    if list.is_empty() {
        println!("{WHO}: no migrations found");
        return Ok(0);
    }
    println!("Migrations:");
    for m in &list {
        match &m.applied_at {
            Some(at) => println!("  [x] {}  ({at})", m.name),
            None => println!("  [ ] {}  (pending)", m.name),
        }
    }
    Ok(0)
}

/// `^[a-zA-Z0-9_]+$`, as Hull requires.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// One more than the largest leading number among `*.sql` names (1 when none).
fn next_number<'a>(names: impl IntoIterator<Item = &'a str>) -> u64 {
    names
        .into_iter()
        .filter(|n| n.ends_with(".sql"))
        .filter_map(|n| {
            let digits: String = n.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u64>().ok()
        })
        .max()
        .map_or(1, |n| n.saturating_add(1))
}

fn create(name: &str, dir: Option<&Path>) -> Result<i32> {
    if !valid_name(name) {
        eprintln!("{WHO}: invalid name '{name}' (use alphanumeric + underscores)");
        return Ok(1);
    }
    let root = app_dir(dir)?;
    let migrations = root.join("migrations");
    let mut existing = Vec::new();
    match fs::read_dir(&migrations) {
        Ok(entries) => {
            for entry in entries {
                let entry =
                    entry.with_context(|| format!("cannot list {}", migrations.display()))?;
                existing.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            fs::create_dir(&migrations)
                .with_context(|| format!("cannot create {}", migrations.display()))?;
        }
        Err(e) => return Err(anyhow!(e).context(format!("cannot list {}", migrations.display()))),
    }
    let file = format!(
        "{:03}_{name}.sql",
        next_number(existing.iter().map(String::as_str))
    );
    let path = shown(dir, &format!("migrations/{file}"));
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    write!(out, "-- Migration: {file}\n\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("{WHO}: created {}", path.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_name("add_tags"));
        assert!(valid_name("V2"));
        for bad in ["", "add-tags", "a b", "x.sql", "../x", "é"] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn numbering() {
        assert_eq!(next_number([]), 1);
        assert_eq!(next_number(["001_init.sql", "README.md"]), 2);
        assert_eq!(next_number(["002_b.sql", "010_c.sql", "001_a.sql"]), 11);
        assert_eq!(next_number(["seed.sql", "999_x.txt"]), 1);
        assert_eq!(next_number(["999_x.sql"]), 1000);
    }
}
