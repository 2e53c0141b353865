//! `cove routes` and `cove db schema|query`: JSON for scripts and coding
//! agents, in the shapes of Hull's `hull agent routes|db schema|db query`
//! (§1.4). Each prints exactly one JSON line on stdout, `{"error": "…"}`
//! with exit code 1 when it fails, so a caller never has to parse stderr.
//!
//! Where Hull's values are lossy this is not: REAL columns are JSON numbers
//! (not `%g` text), BLOBs are `{"base64": "…"}` (not `"<blob:N>"`).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use serde_json::{json, Map, Value as Json};

use cove_core::{AppFiles, Limits, Phase, RouteTable};
use cove_db::{Db, TableInfo, Value, WriteLock};

use crate::app::{canonical_dir, entries_in, locate, AppSource, Runtime};
use crate::cli::{DbArgs, DbCommand, RoutesArgs};
use crate::scratch::{load_routes, memory_with_migrations};

pub fn routes(args: &RoutesArgs) -> Result<i32> {
    Ok(emit(routes_json(args)))
}

pub fn db(args: &DbArgs) -> Result<i32> {
    Ok(emit(match &args.command {
        DbCommand::Schema { dir, db } => schema_json(dir.as_deref(), db.as_deref()),
        DbCommand::Query {
            sql,
            write,
            dir,
            db,
        } => query_json(sql, *write, dir.as_deref(), db.as_deref()),
    }))
}

/// Prints the result (or `{"error": …}`) as one line; returns the exit code.
pub(crate) fn emit(result: Result<Json>) -> i32 {
    match result {
        Ok(v) => {
            println!("{v}");
            0
        }
        Err(e) => {
            println!("{}", json!({ "error": format!("{e:#}") }));
            1
        }
    }
}

// ---- routes ----------------------------------------------------------------

/// The app to load: an entry file as named, else the directory's entry for
/// `--runtime`, else app.lua before app.js (Hull's agent commands prefer Lua;
/// server mode prefers app.js).
fn routes_app(args: &RoutesArgs) -> Result<AppSource> {
    let path = args.dir.as_deref();
    if path.is_some_and(Path::is_file) {
        let app = locate(path)?;
        match args.runtime {
            Some(rt) if rt != app.runtime => bail!(
                "--runtime {} does not match {} (a {} file)",
                rt.name(),
                app.entry,
                app.runtime.name()
            ),
            _ => return Ok(app),
        }
    }
    let dir = path.unwrap_or(Path::new("."));
    if !dir.is_dir() {
        bail!("{}: no such app directory or entry file", dir.display());
    }
    let found = entries_in(dir);
    let pick = match args.runtime {
        Some(rt) => found.iter().find(|(_, r)| *r == rt).ok_or_else(|| {
            anyhow!(
                "no app.{} in {} (--runtime {})",
                rt.ext(),
                dir.display(),
                rt.name()
            )
        })?,
        None => found
            .iter()
            .find(|(_, r)| *r == Runtime::Lua)
            .or(found.first())
            .ok_or_else(|| {
                anyhow!(
                    "no entry point found ({}) in {}",
                    crate::app::ENTRY_NAMES,
                    dir.display()
                )
            })?,
    };
    Ok(AppSource {
        files: AppFiles::Dir(canonical_dir(dir)?),
        entry: pick.0.to_string(),
        runtime: pick.1,
    })
}

pub(crate) fn routes_json(args: &RoutesArgs) -> Result<Json> {
    let app = routes_app(args)?;
    let db = memory_with_migrations(&app.files)?;
    cove_caps::time::start_clock();
    let table = load_routes(&app, db, Limits::default())
        .map_err(|e| anyhow!("failed to load {}: {e}", app.entry))?;
    Ok(routes_value(app.runtime, &table))
}

/// Routes in registration order; middleware pre-body first, then post-body
/// (the order a request meets them), each in registration order.
fn routes_value(runtime: Runtime, table: &RouteTable) -> Json {
    let routes: Vec<Json> = table
        .routes()
        .map(|(method, pattern)| json!({ "method": method, "pattern": pattern }))
        .collect();
    let mut middleware: Vec<_> = table.middleware().collect();
    middleware.sort_by_key(|&(_, _, phase)| phase == Phase::Post);
    let middleware: Vec<Json> = middleware
        .into_iter()
        .map(|(method, pattern, phase)| {
            let phase = match phase {
                Phase::Pre => "pre",
                Phase::Post => "post",
            };
            json!({ "method": method, "pattern": pattern, "phase": phase })
        })
        .collect();
    json!({ "runtime": runtime.name(), "routes": routes, "middleware": middleware })
}

// ---- db --------------------------------------------------------------------

/// The database a `cove db` command reads: `-d FILE`, else `<dir>/data.db`
/// if it exists — read-only unless `write` — else an in-memory database with
/// the migrations applied (a look at the schema before the app ever ran).
fn open_db(dir: Option<&Path>, db: Option<&Path>, write: bool) -> Result<Db> {
    let dir = dir.unwrap_or(Path::new("."));
    if let Some(url) = db.filter(|d| crate::target::postgres_url(d).is_some()) {
        return crate::target::open_cli(url);
    }
    let file: Option<PathBuf> = match db {
        Some(path) if !path.is_file() => bail!(
            "{}: no such database file (without -d, {} or the migrations are used)",
            path.display(),
            dir.join("data.db").display()
        ),
        Some(path) => Some(path.to_path_buf()),
        None => Some(dir.join("data.db")).filter(|p| p.is_file()),
    };
    match file {
        Some(path) if write => Ok(Db::open(&path, WriteLock::default())?),
        Some(path) => Ok(Db::open_readonly(&path)?),
        None if dir.is_dir() => memory_with_migrations(&AppFiles::Dir(dir.to_path_buf())),
        None => bail!("{}: no such app directory", dir.display()),
    }
}

pub(crate) fn schema_json(dir: Option<&Path>, db: Option<&Path>) -> Result<Json> {
    let tables = open_db(dir, db, false)?.schema()?;
    Ok(json!({ "tables": tables.iter().map(table_value).collect::<Vec<_>>() }))
}

/// `{"name","type"}` plus `notnull`, `default`, `pk` only when set, as Hull prints them.
fn table_value(table: &TableInfo) -> Json {
    let columns: Vec<Json> = table
        .columns
        .iter()
        .map(|c| {
            let mut col = Map::new();
            col.insert("name".into(), c.name.clone().into());
            col.insert("type".into(), c.decl_type.clone().into());
            if c.not_null {
                col.insert("notnull".into(), true.into());
            }
            if let Some(d) = &c.default {
                col.insert("default".into(), d.clone().into());
            }
            if c.pk {
                col.insert("pk".into(), true.into());
            }
            Json::Object(col)
        })
        .collect();
    json!({ "name": table.name, "columns": columns })
}

/// The start of the message that refuses a write without `--write`; `cove
/// mcp` words the rest for its own flag.
pub(crate) const WRITE_REFUSED: &str = "the statement may change the database";

pub(crate) fn query_json(
    sql: &str,
    write: bool,
    dir: Option<&Path>,
    db: Option<&Path>,
) -> Result<Json> {
    let mut db = open_db(dir, db, write)?;
    // Checked before running so a read-only look never writes, even to an
    // in-memory database, and the message says how to allow it.
    if !write && db.statement_writes(sql)? {
        bail!("{WRITE_REFUSED}; pass --write to run it");
    }
    let result = db.query_all(sql)?;
    let rows: Vec<Json> = result
        .rows
        .iter()
        .map(|row| Json::Array(row.iter().map(value_json).collect()))
        .collect();
    Ok(json!({ "columns": result.columns, "rows": rows, "count": rows.len() }))
}

/// INTEGER and REAL as JSON numbers (a REAL keeps its `.0`), TEXT as a string
/// (invalid UTF-8 replaced), BLOB as `{"base64": …}`, NULL as null. SQLite's
/// infinities have no JSON number and print as "Infinity" / "-Infinity".
fn value_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Integer(i) => (*i).into(),
        Value::Real(f) => match serde_json::Number::from_f64(*f) {
            Some(n) => Json::Number(n),
            None if *f > 0.0 => "Infinity".into(),
            None => "-Infinity".into(),
        },
        Value::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
        Value::Blob(b) => json!({ "base64": base64(b) }),
    }
}

/// Standard base64 with padding (RFC 4648 §4).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
        assert_eq!(base64(&[0xff, 0x00, 0xfe]), "/wD+");
    }

    #[test]
    fn values_keep_their_types() {
        assert_eq!(value_json(&Value::Real(3.0)).to_string(), "3.0");
        assert_eq!(value_json(&Value::Real(0.1)).to_string(), "0.1");
        assert_eq!(value_json(&Value::Integer(1 << 60)), json!(1i64 << 60));
        assert_eq!(value_json(&Value::Real(f64::INFINITY)), json!("Infinity"));
        assert_eq!(
            value_json(&Value::Blob(vec![1, 2])),
            json!({ "base64": "AQI=" })
        );
        assert_eq!(
            value_json(&Value::Text(b"a\xffb".to_vec())),
            json!("a\u{fffd}b")
        );
    }
}
